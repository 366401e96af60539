import { userInfo } from 'node:os';
import type { Context, MiddlewareHandler } from 'hono';
import { peerUid } from '../os/socket-owner.js';
import { type GuardCheck, guardMiddleware } from './guards.js';
import { refuse } from './refusal.js';

/** The ends of a TCP connection as Node's socket reports them. */
export interface ConnectionEnds {
  localAddress?: string | undefined;
  localPort?: number | undefined;
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
}

/** Who opened a connection: its uid, null when the kernel does not say, 'unsupported' off Linux. */
export type PeerUidResolver = (socket: ConnectionEnds) => number | null | 'unsupported';

/** The kernel's answer, from /proc/net/tcp{,6} (see src/os/socket-owner.ts). */
export const kernelPeerUid: PeerUidResolver = (socket) => {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (localAddress === undefined || localPort === undefined) return null;
  if (remoteAddress === undefined || remotePort === undefined) return null;
  return peerUid({ address: localAddress, port: localPort }, { address: remoteAddress, port: remotePort });
};

/**
 * Whether this platform tells pulse who opened a loopback connection: Linux does, through its
 * socket tables; macOS and Windows give an unprivileged process no TCP peer's uid.
 */
export const peerCheckAvailable = (platform: NodeJS.Platform = process.platform): boolean =>
  platform === 'linux';

const PLATFORM_NAMES: Partial<Record<NodeJS.Platform, string>> = { darwin: 'macOS', win32: 'Windows' };

/**
 * Who may call a daemon started without a token, in a sentence for `pulse start` and `pulse
 * doctor`: its own user only (Linux), or, where the platform cannot tell, every local account.
 */
export const peerAccessSentence = (platform: NodeJS.Platform = process.platform): string => {
  if (peerCheckAvailable(platform)) {
    const owner = ownAccount();
    const who = owner === null ? 'this account' : `${owner.name} (uid ${owner.uid})`;
    return `${who} only: a connection from another account on this machine is refused`;
  }
  return `other local accounts can reach this daemon: on ${PLATFORM_NAMES[platform] ?? platform} pulse cannot tell who opened a loopback connection; start with --token to close it`;
};

/** The daemon's own account, as the refusal names it. */
const ownAccount = (): { uid: number; name: string } | null => {
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  let name = `uid ${uid}`;
  try {
    name = userInfo().username;
  } catch {}
  return { uid, name };
};

/**
 * Every request must come from a socket of the daemon's own uid, checked once per connection (the
 * kernel's tables are read at its first request; its later ones reuse the verdict). A peer the
 * kernel cannot name is refused, so a closed or vanished socket never passes. Used where no token
 * is required; where the platform cannot tell (`available` false: macOS, Windows) it lets every
 * request through, which `pulse start` and `pulse doctor` say.
 */
export const sameUserCheck = ({
  resolve = kernelPeerUid,
  owner = ownAccount(),
  available = peerCheckAvailable(),
}: {
  resolve?: PeerUidResolver;
  owner?: { uid: number; name: string } | null;
  available?: boolean;
} = {}): GuardCheck => {
  const verdicts = new WeakMap<object, number | null | 'unsupported'>();
  const peerOf = (c: Context): number | null | 'unsupported' => {
    const socket = (c.env as { incoming?: { socket?: ConnectionEnds } } | undefined)?.incoming?.socket;
    if (socket === undefined) return null;
    let verdict = verdicts.get(socket);
    if (verdict === undefined) {
      verdict = resolve(socket);
      verdicts.set(socket, verdict);
    }
    return verdict;
  };
  return function sameUserGuardCheck(c) {
    if (!available || owner === null) return undefined;
    const peer = peerOf(c);
    if (peer === owner.uid) return undefined;
    const from =
      peer === 'unsupported'
        ? 'an account pulse cannot name (/proc/net/tcp cannot be read)'
        : peer === null
          ? 'an account pulse cannot name (its socket is gone)'
          : `uid ${peer}`;
    return refuse(
      c,
      403,
      `This pulse daemon serves ${owner.name} (uid ${owner.uid}); this connection comes from ${from}. Each user runs their own pulse: pulse start -p DIR --port <another port>.`,
    );
  };
};

/** `sameUserCheck` as a middleware of its own. */
export const sameUserOnly = (options: Parameters<typeof sameUserCheck>[0] = {}): MiddlewareHandler =>
  guardMiddleware(sameUserCheck(options));
