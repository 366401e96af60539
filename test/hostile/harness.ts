import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { SystemStatus } from '../../src/system/system-status.js';
import { oneShot, type RunningDaemon, startDaemon, tempProject, waitUntil } from '../support/daemon.js';
import { save } from '../support/files.js';

// The hostile-input suite's table machinery: a row is one hostile input and what must come of it;
// every row is followed by the same check that the daemon lives and nothing was lost.

/** One row of the table. `covered` names an existing test of a neighbouring case, if any. */
export interface HostileCase {
  name: string;
  covered?: string;
  /**
   * Sends the hostile input and asserts the clear error (or the safe, documented behaviour);
   * a row that restarts the daemon returns the new one.
   */
  run(daemon: RunningDaemon): Promise<RunningDaemon | unknown>;
  /** What the row may leave behind that the usual check must allow. */
  leaves?: Partial<Leftovers>;
  /** A row that found a real bug, fixed in the daemon; named in the report. */
  bug?: string;
}

/** What a row is allowed to change about the history planted before it. */
export interface Leftovers {
  /** Lines it planted in events.jsonl, which need not parse. */
  plantedLines: number;
  /** A later replan may be pending in place of the planted one (the row edited guidance). */
  newerPending: boolean;
  /** The row deleted `.pulse/` on purpose: the planted events are gone from disk. */
  historyDeleted: boolean;
}

/** The history planted before a group: one acknowledged replan, then one pending. */
export interface Planted {
  ackedId: string;
  pendingId: string;
}

/** Counts what the suite did, for its closing line. */
export const tally = { tried: 0, passed: 0, bugsFixed: 0, lost: 0 };

/** What rows measured, for docs/reliability.md: printed with the closing line. */
export const figures: { hugeFileCallMs?: number; procRssMiB?: number } = {};

/** A raw HTTP request (node:http sends only the headers given, Host included). */
export const rawRequest = (
  url: string,
  {
    method = 'POST',
    body,
    headers = { 'content-type': 'application/json' },
  }: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
) =>
  new Promise<{ status: number; text: string; headers: Record<string, unknown> }>((resolve, reject) => {
    // A fresh connection each: a socket the daemon closed after a 413 is never reused.
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          text: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });

/** A tool call over a one-shot POST; the JSON-RPC answer. */
export const callOneShot = async (daemon: RunningDaemon, name: string, args: unknown = {}) =>
  (await oneShot(daemon.url, 'tools/call', { name, arguments: args })).body;

/** `pulse_should_interrupt`'s decision, through a one-shot POST. */
export const decision = async (daemon: RunningDaemon) => {
  const answer = await callOneShot(daemon, 'pulse_should_interrupt');
  expect(answer.result?.isError, JSON.stringify(answer)).toBeFalsy();
  return answer.result!.structuredContent as {
    needs_replan: boolean;
    pending_replan_event_id: string | null;
    last_acknowledged_event_id: string | null;
  };
};

const pulseFile = (daemon: RunningDaemon, name: string) => join(daemon.project, '.pulse', name);

/** `pulse://context/latest` as a one-shot read renders it. */
export const contextText = async (daemon: RunningDaemon) => {
  const answer = await oneShot(daemon.url, 'resources/read', { uri: 'pulse://context/latest' });
  return answer.body.result!.contents![0]!.text;
};

/** The daemon's `/status`. */
export const status = async (daemon: RunningDaemon) =>
  (await (await fetch(new URL('/status', daemon.url))).json()) as SystemStatus;

/** Saves one of the protocol files as an editor does. */
export const edit = (daemon: RunningDaemon, name: string, text: string) =>
  save(pulseFile(daemon, name), text);

/** Plants the history every row must keep: a guidance edit acknowledged, then a constraints edit pending. */
export const plantHistory = async (daemon: RunningDaemon): Promise<Planted> => {
  await edit(daemon, 'guidance.md', '# Guidance\n\nAcknowledged before the hostile input.\n');
  const acked = (await decision(daemon)).pending_replan_event_id!;
  const ack = await callOneShot(daemon, 'pulse_ack_replan', { event_id: acked });
  expect(ack.result!.structuredContent!.accepted).toBe(true);
  await edit(daemon, 'constraints.md', '# Constraints\n\nPending before the hostile input.\n');
  const pending = (await decision(daemon)).pending_replan_event_id!;
  expect(pending).not.toBe(acked);
  return { ackedId: acked, pendingId: pending };
};

/** A daemon on a fresh project with its history planted. */
export const startPlanted = async (prefix: string, args: string[] = []) => {
  const project = await tempProject(prefix);
  const daemon = await startDaemon(project, { args });
  return { daemon, planted: await plantHistory(daemon) };
};

const noLeftovers: Leftovers = { plantedLines: 0, newerPending: false, historyDeleted: false };

/**
 * The check after every row: the process runs, `/healthz` answers 200, a `pulse_should_interrupt`
 * call answers, the planted replan is still pending (or a newer one, if the row edited guidance),
 * the planted ack stands in memory and in state.json, and every line pulse wrote to events.jsonl
 * still parses, the planted events among them.
 */
export const assertNothingLost = async (
  daemon: RunningDaemon,
  planted: Planted,
  allowed: Partial<Leftovers> = {},
): Promise<void> => {
  const leaves = { ...noLeftovers, ...allowed };
  expect(daemon.process.exitCode, daemon.output()).toBeNull();
  let health = '';
  await waitUntil(
    async () => {
      const response = await fetch(new URL('/healthz', daemon.url));
      health = await response.text();
      return response.status === 200;
    },
    { describe: () => `/healthz 200 (it answers ${health})` },
  );
  const now = await decision(daemon);
  const lost: string[] = [];
  if (!now.needs_replan) lost.push('the pending replan');
  if (!leaves.newerPending && now.pending_replan_event_id !== planted.pendingId) lost.push('the pending id');
  if ((now.pending_replan_event_id ?? '') < planted.pendingId) lost.push('a pending id as recent');
  if (now.last_acknowledged_event_id !== planted.ackedId) lost.push('the accepted ack');
  const state = await waitUntil(
    async () => {
      try {
        return JSON.parse(await readFile(pulseFile(daemon, 'state.json'), 'utf8'));
      } catch {
        return undefined;
      }
    },
    { describe: () => 'a state.json that parses' },
  );
  if (state.last_acknowledged_event_id !== planted.ackedId) lost.push('the ack in state.json');
  const lines = (await readFile(pulseFile(daemon, 'events.jsonl'), 'utf8')).split('\n').filter(Boolean);
  const parsed = lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as { id: string }];
    } catch {
      return [];
    }
  });
  if (lines.length - parsed.length > leaves.plantedLines) lost.push('a line of events.jsonl');
  const ids = new Set(parsed.map((event) => event.id));
  if (!leaves.historyDeleted && !(ids.has(planted.ackedId) && ids.has(planted.pendingId))) {
    lost.push('a planted event in events.jsonl');
  }
  tally.lost += lost.length;
  expect(lost, `lost after the row: ${lost.join(', ')}`).toEqual([]);
};

/** Runs one row and the check after it, counting both in the tally; returns the daemon that runs now. */
export const runRow = async (row: HostileCase, daemon: RunningDaemon, planted: Planted) => {
  tally.tried++;
  const result = await row.run(daemon);
  const running =
    typeof result === 'object' && result !== null && 'url' in result ? (result as RunningDaemon) : daemon;
  await assertNothingLost(running, planted, row.leaves);
  tally.passed++;
  if (row.bug) tally.bugsFixed++;
  return running;
};

/** A JSON-RPC request body. */
export const rpc = (method: string, params: unknown = {}, id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** A JSON-RPC error answer, as the rows read it. */
export interface RpcErrorAnswer {
  id: unknown;
  error: { code: number; message: string };
}

/** The JSON a raw answer holds. */
export const json = <T = RpcErrorAnswer & { error: string | RpcErrorAnswer['error'] }>(answer: {
  text: string;
}): T => JSON.parse(answer.text) as T;
