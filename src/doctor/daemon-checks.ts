import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { PROBE_SESSION } from '../hooks/events.js';
import { findDaemon, NOT_RUNNING } from '../hooks/find-daemon.js';
import { VERSION } from '../package/version.js';
import { tokenHeaders, tokenRefusal } from '../store/daemon-token.js';
import type { PulsePaths } from '../store/paths.js';
import { type Finding, holds, problem } from './finding.js';

/** The daemon doctor found serving this project, for the agents' checks. */
export interface ServingDaemon {
  port: number;
  url: string;
}

const sameFolder = async (a: string, b: string) =>
  a === b || (await realpath(a).catch(() => a)) === (await realpath(b).catch(() => b));

/** GET `path` of the daemon, JSON, within 2 s; null when nothing answers. */
export const ask = async (base: string, path: string, init: RequestInit = {}) => {
  try {
    const response = await fetch(new URL(path, base), {
      ...init,
      headers: { ...tokenHeaders(), ...init.headers },
      signal: AbortSignal.timeout(2000),
    });
    return { status: response.status, text: await response.text() };
  } catch {
    return null;
  }
};

/**
 * Whether a daemon serves this project: this user's daemon record, verified (a live pid of this
 * user's, a loopback port only this user listens on), `/healthz` naming this project and this
 * version, and the hook route answering an agent's hook as the agents will.
 */
export const checkDaemon = async (
  paths: PulsePaths,
  startCommand: string,
): Promise<{ findings: Finding[]; daemon: ServingDaemon | null }> => {
  const down = (message: string, fix = `Start it: ${startCommand}`) => ({
    findings: [problem('daemon', message, fix)],
    daemon: null,
  });
  const found = findDaemon(paths.projectRoot, paths.projectRoot);
  if ('problem' in found)
    return down(
      found.problem === NOT_RUNNING
        ? 'not running (no daemon record of yours for this project): agents run without replans enforced'
        : `not used: ${found.problem}; agents run without replans enforced`,
    );
  const { discovery } = found;
  const health = await ask(discovery.url, 'healthz');
  if (health === null) {
    return down(
      `pid ${discovery.pid} runs, but nothing answers at ${discovery.url} within 2 s`,
      `Stop it (kill ${discovery.pid}), then: ${startCommand}`,
    );
  }
  if (health.status === 401) {
    return down(
      tokenRefusal(discovery.url),
      'Export PULSE_TOKEN=<the token the daemon was started with>, then run this again.',
    );
  }
  const body = JSON.parse(health.text) as {
    project?: string;
    version?: string;
    ok?: boolean;
    error?: string;
    /** What the daemon cannot see or record now, one sentence each with its fix. */
    problems?: string[];
  };
  if (body.project === undefined || !(await sameFolder(body.project, paths.projectRoot))) {
    return down(
      `${discovery.url} is a pulse serving ${body.project ?? 'another project'}, not ${paths.projectRoot}`,
      `Stop the daemon of pid ${discovery.pid}, then: ${startCommand}`,
    );
  }
  const daemon = { port: discovery.port, url: discovery.url };
  // An older pulse wrote where it ran into the project; nothing reads it now.
  const findings: Finding[] = existsSync(join(paths.dir, 'daemon.json'))
    ? [holds('daemon', '.pulse/daemon.json is left from an older pulse and ignored: you may delete it')]
    : [];
  if (body.ok !== true && (body.problems?.length ?? 0) > 0) {
    findings.push(
      problem(
        'daemon',
        `answers, but cannot see or record .pulse/: ${body.problems!.join(' ')}`,
        'Fix what it names; the daemon notices within a second, no restart needed.',
      ),
    );
  } else if (body.ok !== true) {
    findings.push(
      problem(
        'daemon',
        `answers, but is not well: ${body.error ?? 'the event log failed'}`,
        `Read .pulse/pulse.log, fix what it says, then restart: ${startCommand}`,
      ),
    );
  } else if (body.version !== VERSION) {
    findings.push(
      problem(
        'daemon',
        `runs pulse ${body.version}, but this pulse is ${VERSION}: its hooks and tools may differ from what setup wrote`,
        `Restart it (kill ${discovery.pid}, then ${startCommand})`,
      ),
    );
  } else {
    findings.push(
      holds(
        'daemon',
        `pulse ${VERSION} serves ${paths.projectRoot} at ${discovery.url} (pid ${discovery.pid})`,
      ),
    );
  }
  // The route the agents' hooks post to, answered as they will be: a read while nothing is pending changes nothing.
  const probe = JSON.stringify({
    session_id: PROBE_SESSION,
    cwd: paths.projectRoot,
    hook_event_name: 'PreToolUse',
    tool_name: 'Read',
    tool_input: { file_path: paths.file('task.md') },
  });
  const route = `/hook/claude/PreToolUse?project=${encodeURIComponent(paths.projectRoot)}`;
  const hook = await ask(discovery.url, route, {
    method: 'POST',
    body: probe,
    headers: { 'content-type': 'application/json' },
  });
  let answer: Record<string, unknown> | null = null;
  try {
    answer = hook?.status === 200 ? (JSON.parse(hook.text) as Record<string, unknown>) : null;
  } catch {
    answer = null;
  }
  if (answer === null || typeof answer.systemMessage === 'string') {
    findings.push(
      problem(
        'daemon',
        `its hook route did not answer as agents need (${hook === null ? 'no answer' : `${hook.status}: ${hook.text.slice(0, 200)}`})`,
        `Restart it with this pulse: ${startCommand}`,
      ),
    );
  }
  return { findings, daemon };
};
