import { execFile } from 'node:child_process';
import type { Notification, NotifyOutcome } from '../../machines/notifier-context.js';
import { findProgram } from '../os/find-program.js';

/** A notifier that has not answered within this is given up on (it must never hold the daemon). */
const NOTIFY_TIMEOUT_MS = 5000;
/** What a notification may say at most; titles come from sources, so they are cut, never trusted. */
const TITLE_LIMIT = 120;
const BODY_LIMIT = 400;

const cut = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit - 1)}…` : text);

/** The command that shows `notification` here: notify-send (Linux and others), osascript (macOS); null when neither is on PATH. */
const commandFor = (
  { title, body }: Notification,
  { path, platform }: { path: string; platform: NodeJS.Platform },
): { program: string; args: string[] } | null => {
  const [t, b] = [cut(title, TITLE_LIMIT), cut(body, BODY_LIMIT)];
  const osascript = findProgram('osascript', path);
  if (platform === 'darwin' && osascript !== null)
    // The text goes in as arguments, never into the script.
    return {
      program: osascript,
      args: [
        '-e',
        'on run argv',
        '-e',
        'display notification (item 2 of argv) with title (item 1 of argv)',
        '-e',
        'end run',
        t,
        b,
      ],
    };
  const notifySend = findProgram('notify-send', path);
  if (notifySend !== null) return { program: notifySend, args: ['--app-name=pulse', '--', t, b] };
  return null;
};

/**
 * The notifier machine's `notifyDesktop` effect: runs notify-send (or osascript on macOS) with the
 * notification as arguments, at most 5 s; no such program is `missing` (said once, not tried
 * again), a failing one throws with why.
 */
export const createDesktopNotifier =
  ({
    env = process.env,
    platform = process.platform,
  }: {
    env?: NodeJS.ProcessEnv;
    platform?: NodeJS.Platform;
  } = {}) =>
  (notification: Notification): Promise<NotifyOutcome> => {
    const command = commandFor(notification, { path: env.PATH ?? '', platform });
    if (command === null)
      return Promise.resolve({
        shown: false,
        missing: `no desktop notifier: ${platform === 'darwin' ? 'osascript' : 'notify-send'} is not on PATH (${platform === 'darwin' ? 'it comes with macOS' : 'install libnotify-bin, or your desktop’s notify-send'})`,
      });
    return new Promise((resolve, reject) => {
      execFile(
        command.program,
        command.args,
        { timeout: NOTIFY_TIMEOUT_MS, env },
        (error, _stdout, stderr) => {
          if (error === null) return resolve({ shown: true });
          const why = error.killed
            ? `no answer within ${NOTIFY_TIMEOUT_MS / 1000} s`
            : stderr.trim().split('\n')[0] || error.message;
          reject(new Error(`${command.program} failed: ${why}`));
        },
      );
    });
  };
