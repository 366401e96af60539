import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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

/** A process's state letter and process group, from `/proc/<pid>/stat` (Linux), or null when it is gone. */
const procStat = (pid: number | string): { state: string; group: number } | null => {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last one.
  const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: state!, group: Number(group) };
};

/** Whether `pid` still runs: a zombie (exited, not yet reaped by its parent) does not. */
export const isRunning = (pid: number): boolean => {
  const stat = procStat(pid);
  return stat !== null && stat.state !== 'Z';
};

/** The process group `pid` is in, or null when it is gone. */
export const groupOf = (pid: number): number | null => procStat(pid)?.group ?? null;

/** Every running process (zombies aside) of the process group `group`, read from /proc. */
export const groupMembers = (group: number): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      const stat = procStat(entry);
      return stat !== null && stat.group === group && stat.state !== 'Z';
    })
    .map(Number);

/** What a finished child process printed and how it exited. */
export interface ProcessOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How a child process is run: its stdin, environment and folder, and how long it may take. */
interface RunOptions {
  timeoutMs?: number;
  env?: Record<string, string>;
  cwd?: string;
  input?: string;
}

/**
 * Runs a program as a child process (with `input` on its stdin) and returns what it printed and how it exited; kills
 * it and fails after `timeoutMs`.
 */
export const runProgram = (
  file: string,
  args: string[],
  { timeoutMs = 15_000, env = {}, cwd, input }: RunOptions = {},
) =>
  new Promise<ProcessOutput>((resolve, reject) => {
    const child = spawn(file, args, { cwd, env: { ...process.env, ...env } });
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
          `${basename(args[0] ?? file)} ${args.slice(1).join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });

/** Runs a Node script as a child process, as `runProgram` does. */
export const runNode = (script: string, args: string[], options: RunOptions = {}) =>
  runProgram(process.execPath, [script, ...args], options);
