import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { currentRuntime } from '../src/setup/hook-handlers.js';
import { runNode } from '../test/helpers/processes.js';
import { type ProfileSummary, summarizeProfile } from './cpu-profile-summary.js';
import { CLI, startDaemon } from './daemon.js';
import { connectSession, shouldInterrupt } from './session.js';
import { type Summary, summarize } from './stats.js';

export interface HooksPlan {
  warmup: number;
  runs: number;
}

export interface HooksResult {
  /** Through `dist/src/bin.cjs`, as `pulse setup` writes the command. */
  hook: Summary;
  /** Through `dist/src/cli.js`, as an older `pulse setup` wrote it: the ES entry. */
  hookViaCli: Summary;
  nodeStart: Summary;
  /** One hook run under `node --cpu-prof`: where its time went. */
  profile: ProfileSummary;
  /** Distinct project and package files that ran code in that profile. */
  profiledFiles: number;
}

/** Runs `node args…` with `stdin`, resolves with its wall time (spawn → exit) and stdout; non-zero exit throws. */
const timeNode = async ([first, ...rest]: string[], stdin: string) => {
  const started = performance.now();
  const { code, stdout, stderr } = await runNode(first!, rest, { input: stdin });
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`node ${first} ${rest.join(' ')} exited ${code}: ${stderr}`);
  return { ms, stdout };
};

/**
 * Times `pulse hook claude --event PreToolUse` as Claude Code runs it (a new process, the tool
 * call as JSON on stdin) against a running daemon with a pending replan, so every run answers
 * deny: through the bin `pulse setup` names and through `cli.js`, interleaved run by run with
 * `node -e 0`, the floor of any Node process. Then profiles one hook run through the bin.
 */
export const measureHooks = async (
  project: string,
  plan: HooksPlan,
  progress: (line: string) => void,
): Promise<HooksResult> => {
  const daemon = await startDaemon(project, { startArgs: ['--log-level', 'warn'] });
  try {
    const client = await connectSession(daemon.url);
    try {
      await writeFile(join(project, '.pulse', 'guidance.md'), '# Guidance\n\nStop and use the new API.\n');
      while (!(await shouldInterrupt(client, null)).needs_replan)
        await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await client.close();
    }
    const input = JSON.stringify({
      session_id: 'bench-session',
      transcript_path: join(project, 'transcript.jsonl'),
      cwd: project,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Edit',
      tool_input: { file_path: join(project, 'src', 'app.ts'), old_string: 'a', new_string: 'b' },
      tool_use_id: 'toolu_bench',
    });
    const hookArgs = [currentRuntime().cliPath, 'hook', 'claude', '--event', 'PreToolUse'];
    const hookTimer = (args: string[]) => async () => {
      const { ms, stdout } = await timeNode(args, input);
      if (!stdout.includes('"permissionDecision":"deny"'))
        throw new Error(`pulse hook did not deny the edit while a replan is pending: ${stdout}`);
      return ms;
    };
    const timers = [
      hookTimer(hookArgs),
      hookTimer([CLI, ...hookArgs.slice(1)]),
      async () => (await timeNode(['-e', '0'], '')).ms,
    ];
    for (let n = 0; n < plan.warmup; n++) for (const timer of timers) await timer();
    const times: number[][] = timers.map(() => []);
    for (let n = 0; n < plan.runs; n++) {
      // Which goes first rotates, so none always runs right after another's exit.
      for (let k = 0; k < timers.length; k++) {
        const i = (n + k) % timers.length;
        times[i]!.push(await timers[i]!());
      }
      if ((n + 1) % 25 === 0) progress(`${n + 1}/${plan.runs} runs`);
    }
    const [hooks, viaCli, starts] = times as [number[], number[], number[]];

    const profileDir = join(project, 'profile');
    await timeNode(
      ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-interval', '100', ...hookArgs],
      input,
    );
    const [file] = await readdir(profileDir);
    const profile = JSON.parse(await readFile(join(profileDir, file!), 'utf8'));
    const urls = new Set<string>(
      (profile.nodes as Array<{ callFrame: { url: string } }>)
        .map((node) => node.callFrame.url)
        .filter((url) => url.startsWith('file:')),
    );
    return {
      hook: summarize(hooks),
      hookViaCli: summarize(viaCli),
      nodeStart: summarize(starts),
      profile: summarizeProfile(profile),
      profiledFiles: urls.size,
    };
  } finally {
    await daemon.stop();
  }
};
