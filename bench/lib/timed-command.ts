import { spawn } from 'node:child_process';

/** Past this a command is killed and reported: a hook that hangs is a failure, not a timing. */
const LIMIT_MS = 15_000;

/** What one timed run of a command did. */
export interface TimedRun {
  /** Wall time in the bench process, from `spawn()` to the child's exit with its output read. */
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `file args…` in `cwd` with `input` on stdin, as an agent runs a hook: a new process, the
 * hook JSON written to it at once and stdin closed. Resolves once it exited and its output is read.
 */
export const timeCommand = (
  file: string,
  args: readonly string[],
  { input = '', cwd }: { input?: string; cwd?: string } = {},
): Promise<TimedRun> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`${file} ${args.join(' ')} did not exit within ${LIMIT_MS} ms:\n${stdout}\n${stderr}`),
      );
    }, LIMIT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // A child that exits without reading its stdin (`node -e 0`) closes the pipe under the write.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
    child.stdout.on('data', (data) => {
      stdout += data;
    });
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    child.once('close', (code) => {
      const ms = performance.now() - started;
      clearTimeout(timer);
      resolve({ ms, code, stdout, stderr });
    });
  });

/** The same, and a non-zero exit throws with what the command printed. */
export const timeCommandOk = async (
  file: string,
  args: readonly string[],
  options?: { input?: string; cwd?: string },
): Promise<TimedRun> => {
  const run = await timeCommand(file, args, options);
  if (run.code !== 0)
    throw new Error(`${file} ${args.join(' ')} exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
  return run;
};
