import { spawn } from 'node:child_process';

/** Past this the session-start hook stops waiting and lets the agent go on (it fails open). */
export const AUTOSTART_LIMIT_MS = 25_000;

/**
 * Starts the project's daemon in the background with `pulse start --detach` (this same pulse),
 * and resolves once it serves; rejects with the reason it gave (the port is taken, the folder is
 * not writable, …) or when it takes too long.
 */
export const startDaemonFor = (
  project: string,
  port: number | undefined,
  { script = process.argv[1]!, limitMs = AUTOSTART_LIMIT_MS } = {},
): Promise<void> =>
  new Promise((resolve, reject) => {
    const args = [
      script,
      'start',
      '--detach',
      '-p',
      project,
      ...(port === undefined ? [] : ['--port', String(port)]),
    ];
    // Its stdout is the start summary, not the hook's answer: kept apart, as is its stderr, for the reason.
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`pulse start --detach did not finish within ${limitMs / 1000} s`));
    }, limitMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new Error(stderr.trim().replace(/^pulse: /, '') || `pulse start --detach exited with ${code}`),
        );
    });
  });
