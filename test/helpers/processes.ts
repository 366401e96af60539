import { spawn } from 'node:child_process';
import { basename } from 'node:path';

/** Whether the process `pid` is still running, probed with signal 0 (which sends nothing). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** What a finished child process printed and how it exited. */
export interface ProcessOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a Node script as a child process (with `input` on its stdin) and returns what it printed and how it exited; kills
 * it and fails after `timeoutMs`.
 */
export const runNode = (
  script: string,
  args: string[],
  {
    timeoutMs = 15_000,
    env = {},
    cwd,
    input,
  }: { timeoutMs?: number; env?: Record<string, string>; cwd?: string; input?: string } = {},
) =>
  new Promise<ProcessOutput>((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd, env: { ...process.env, ...env } });
    child.stdin.on('error', () => {}); // a child that exits without reading its stdin
    child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${basename(script)} ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
