import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  callTool,
  connectClient,
  type RunningDaemon,
  removeProject,
  startDaemon,
  tempProject,
} from '../support/daemon.js';
import { save } from '../support/files.js';
import type { AckAnswer, Decision } from '../support/protocol.js';

// Adopting a `.pulse/` folder that PulseAgent 0.1.0 wrote: its log lines, its state.json
// (schema 1 and 2), its timestamps with `+00:00`, and keys we do not know.

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

const FILES = {
  task: '# Task\n\nPort the parser to the new AST.\n',
  guidanceOld: '# Guidance\n\nKeep the old parser around.\n',
  guidance: '# Guidance\n\nDrop the old parser; the new AST is the only path.\n',
  constraints: '# Constraints\n\nDo not touch the public API.\n',
  planOld: '# Plan\n\n1. Port expressions.\n',
  plan: '# Plan\n\n1. Port expressions.\n2. Port statements.\n',
};

interface PulseAgentEvent {
  id: string;
  timestamp: string;
  kind: 'created' | 'modified' | 'deleted';
  path: string;
  sha256: string | null;
  size: number | null;
}

/** A line as PulseAgent's pydantic `model_dump_json()` writes it: compact, in field order. */
const pulseAgentLine = (e: PulseAgentEvent) =>
  `${JSON.stringify({ id: e.id, timestamp: e.timestamp, kind: e.kind, path: e.path, sha256: e.sha256, size: e.size })}\n`;

/** state.json as PulseAgent writes it: `json.dumps(indent=2, sort_keys=True)` plus a newline. */
const pulseAgentState = (state: Record<string, unknown>) => {
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(state).sort()) sorted[key] = state[key];
  return `${JSON.stringify(sorted, null, 2)}\n`;
};

const modified = (id: string, timestamp: string, name: string, text: string): PulseAgentEvent => ({
  id,
  timestamp,
  kind: 'modified',
  path: `.pulse/${name}`,
  sha256: sha256(text),
  size: Buffer.byteLength(text),
});

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * What PulseAgent 0.1.0's pydantic `PulseState` needs to load a state.json we wrote: the
 * required key, and every known key with a type it accepts.
 */
const expectReadableState = (state: Record<string, unknown>) => {
  expect(state.schema_version).toBe(2);
  expect(typeof state.project_root).toBe('string');
  expect(state.initialized_at).toMatch(ISO_DATETIME);
  expect(typeof state.last_hashes).toBe('object');
  for (const value of Object.values(state.last_hashes as Record<string, unknown>)) {
    if (value !== null) expect(value).toMatch(HEX64);
  }
  for (const key of ['last_acknowledged_event_id', 'last_acknowledged_plan_sha256']) {
    expect(key in state).toBe(true);
    expect(state[key] === null || typeof state[key] === 'string').toBe(true);
  }
  expect('last_acknowledged_at' in state).toBe(true);
  if (state.last_acknowledged_at !== null) expect(state.last_acknowledged_at).toMatch(ISO_DATETIME);
};

/** What PulseAgent's pydantic `PulseEvent` needs to load each line of events.jsonl. */
const expectReadableEvents = (text: string) => {
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.split('\n').slice(0, -1)) {
    const event = JSON.parse(line);
    expect(typeof event.id).toBe('string');
    expect(event.timestamp).toMatch(ISO_DATETIME);
    expect(['created', 'modified', 'deleted']).toContain(event.kind);
    expect(event.path).toMatch(/^\.pulse\/(task|guidance|constraints|plan)\.md$/);
    expect(event.sha256 === null || HEX64.test(event.sha256)).toBe(true);
    expect(event.size === null || Number.isInteger(event.size)).toBe(true);
  }
};

interface StateJson {
  last_hashes: Record<string, string | null>;
  [key: string]: unknown;
}

interface Adopted {
  project: string;
  daemon: RunningDaemon;
  client: Client;
  file(name: string): string;
  shouldInterrupt(lastSeen?: string | null): Promise<Decision>;
  ack(eventId: string): Promise<AckAnswer>;
  state(): Promise<StateJson>;
  restart(): Promise<void>;
}

describe('adopting a .pulse/ folder written by PulseAgent 0.1.0', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  /** Writes the folder as PulseAgent left it, then starts our daemon on it. */
  const adopt = async ({
    files,
    events,
    state,
  }: {
    files: Record<string, string>;
    events: PulseAgentEvent[];
    state: (project: string) => Record<string, unknown>;
  }): Promise<Adopted> => {
    const project = await tempProject('pulse-compat-');
    cleanups.push(() => removeProject(project));
    const file = (name: string) => join(project, '.pulse', name);
    await mkdir(join(project, '.pulse'));
    for (const [name, text] of Object.entries(files)) await writeFile(file(name), text);
    await writeFile(file('events.jsonl'), events.map(pulseAgentLine).join(''));
    await writeFile(file('state.json'), pulseAgentState(state(project)));

    const session = { daemon: null as unknown as RunningDaemon, client: null as unknown as Client };
    const connect = async () => {
      session.daemon = await startDaemon(project);
      const daemon = session.daemon;
      cleanups.push(() => daemon.stop());
      session.client = await connectClient(daemon.url);
      const client = session.client;
      cleanups.push(() => client.close());
    };
    await connect();
    return {
      project,
      get daemon() {
        return session.daemon;
      },
      get client() {
        return session.client;
      },
      file,
      shouldInterrupt: (lastSeen = null) =>
        callTool<Decision>(session.client, 'pulse_should_interrupt', { last_seen_event_id: lastSeen }),
      ack: (eventId) => callTool<AckAnswer>(session.client, 'pulse_ack_replan', { event_id: eventId }),
      state: async () => JSON.parse(await readFile(file('state.json'), 'utf8')),
      async restart() {
        await session.client.close();
        expect(await session.daemon.stop()).toBe(0);
        await connect();
      },
    };
  };

  const currentFiles = {
    'task.md': FILES.task,
    'guidance.md': FILES.guidance,
    'constraints.md': FILES.constraints,
    'plan.md': FILES.plan,
  };
  const currentHashes = () =>
    Object.fromEntries(Object.entries(currentFiles).map(([name, text]) => [name, sha256(text)]));

  describe('a schema-1 state.json with no ack yet', () => {
    const events: PulseAgentEvent[] = [
      modified('evt_20250103T090000000001Z_0a1b2c3d', '2025-01-03T09:00:00.000001Z', 'task.md', FILES.task),
      modified(
        'evt_20250103T090500123456Z_1b2c3d4e',
        '2025-01-03T09:05:00.123456+00:00',
        'guidance.md',
        FILES.guidanceOld,
      ),
      modified(
        'evt_20250103T091000000000Z_2c3d4e5f',
        '2025-01-03T09:10:00+00:00',
        'constraints.md',
        FILES.constraints,
      ),
      modified(
        'evt_20250103T091500654321Z_3d4e5f60',
        '2025-01-03T09:15:00.654321Z',
        'guidance.md',
        FILES.guidance,
      ),
      {
        id: 'evt_20250103T092000000002Z_4e5f6071',
        timestamp: '2025-01-03T09:20:00.000002+00:00',
        kind: 'deleted',
        path: '.pulse/plan.md',
        sha256: null,
        size: null,
      },
      {
        ...modified(
          'evt_20250103T092100000003Z_5f607182',
          '2025-01-03T09:21:00.000003+00:00',
          'plan.md',
          FILES.plan,
        ),
        kind: 'created',
      },
    ];
    const ids = events.map((e) => e.id);
    const schema1 = (project: string) => ({
      schema_version: 1,
      project_root: project,
      initialized_at: '2025-01-03T08:59:59.999999+00:00',
      last_hashes: currentHashes(),
    });

    it('keeps the whole history: latest event, pending replan and files computed from the adopted log', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema1 });
      const decision = await s.shouldInterrupt();
      expect(decision).toMatchObject({
        needs_replan: true,
        latest_event_id: ids[5],
        has_new_events: true,
        changed_files: events.map((e) => e.path),
        pending_replan_event_id: ids[3],
        pending_replan_files: ['.pulse/guidance.md', '.pulse/constraints.md'],
        last_acknowledged_event_id: null,
        last_acknowledged_plan_sha256: null,
      });
      const sinceDeletion = await s.shouldInterrupt(ids[4]);
      expect(sinceDeletion.changed_files).toEqual(['.pulse/plan.md']);
      expect(sinceDeletion.last_seen_event_known).toBe(true);
    });

    it('leaves the adopted events.jsonl byte for byte as it was when the files match it', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema1 });
      await s.shouldInterrupt();
      await s.client.readResource({ uri: 'pulse://context/latest' });
      expect(await readFile(s.file('events.jsonl'), 'utf8')).toBe(events.map(pulseAgentLine).join(''));
    });

    it('migrates state.json to schema 2 on disk, adding null ack keys and keeping the rest', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema1 });
      const state = await s.state();
      expect(state).toEqual({
        schema_version: 2,
        project_root: s.project,
        initialized_at: '2025-01-03T08:59:59.999999+00:00',
        last_hashes: currentHashes(),
        last_acknowledged_event_id: null,
        last_acknowledged_plan_sha256: null,
        last_acknowledged_at: null,
      });
      expect(s.daemon.output()).toMatch(/schema 1 migrated to schema 2/);
    });

    it('lists the adopted events in the context resource with their timestamps in +00:00 form', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema1 });
      const result = await s.client.readResource({ uri: 'pulse://context/latest' });
      const text = (result.contents[0] as { text: string }).text;
      const recent = text
        .slice(
          text.indexOf('## Recent Events\n') + '## Recent Events\n'.length,
          text.indexOf('## External Events'),
        )
        .trim();
      expect(recent.split('\n')).toEqual([
        `- ${ids[0]} 2025-01-03T09:00:00.000001+00:00 modified .pulse/task.md`,
        `- ${ids[1]} 2025-01-03T09:05:00.123456+00:00 modified .pulse/guidance.md`,
        `- ${ids[2]} 2025-01-03T09:10:00+00:00 modified .pulse/constraints.md`,
        `- ${ids[3]} 2025-01-03T09:15:00.654321+00:00 modified .pulse/guidance.md`,
        `- ${ids[4]} 2025-01-03T09:20:00.000002+00:00 deleted .pulse/plan.md`,
        `- ${ids[5]} 2025-01-03T09:21:00.000003+00:00 created .pulse/plan.md`,
      ]);
      expect(text).toContain(`- pending_replan_event_id: ${ids[3]}`);
      expect(text).toContain('- pending_replan_files: .pulse/guidance.md, .pulse/constraints.md');
    });

    it('refuses the older adopted guidance event as stale and accepts the latest one', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema1 });
      const stale = await s.ack(ids[1]!);
      expect(stale).toMatchObject({ accepted: false, code: 'stale_event', acknowledged_event_id: null });
      expect(stale.reason).toBe(
        `Event ${ids[1]} is stale. Acknowledge the latest pending replan event ${ids[3]} instead.`,
      );
      const accepted = await s.ack(ids[3]!);
      expect(accepted).toMatchObject({
        accepted: true,
        acknowledged_event_id: ids[3],
        plan_sha256: sha256(FILES.plan),
      });
      const state = await s.state();
      expect(state.schema_version).toBe(2);
      expect(state.last_acknowledged_event_id).toBe(ids[3]);
      expect(state.last_acknowledged_plan_sha256).toBe(sha256(FILES.plan));
      expectReadableState(state);
    });
  });

  describe('a schema-2 state.json with an ack and keys we do not know', () => {
    const events: PulseAgentEvent[] = [
      modified(
        'evt_20250210T140000000000Z_a0a1a2a3',
        '2025-02-10T14:00:00+00:00',
        'guidance.md',
        FILES.guidanceOld,
      ),
      modified(
        'evt_20250210T140100000001Z_b0b1b2b3',
        '2025-02-10T14:01:00.000001Z',
        'constraints.md',
        FILES.constraints,
      ),
      modified(
        'evt_20250210T141500250000Z_c0c1c2c3',
        '2025-02-10T14:15:00.250000+00:00',
        'plan.md',
        FILES.plan,
      ),
      modified('evt_20250210T150000000000Z_d0d1d2d3', '2025-02-10T15:00:00Z', 'guidance.md', FILES.guidance),
    ];
    const ids = events.map((e) => e.id);
    const ackedPlanSha = sha256(FILES.planOld);
    const extra = { x_team_note: 'keep me', x_future: { nested: [1, 2, { deep: true }] } };
    const schema2 = (project: string) => ({
      schema_version: 2,
      project_root: project,
      initialized_at: '2025-02-10T13:59:00.000000Z',
      last_hashes: currentHashes(),
      last_acknowledged_event_id: ids[1],
      last_acknowledged_plan_sha256: ackedPlanSha,
      last_acknowledged_at: '2025-02-10T14:10:00.123456+00:00',
      ...extra,
    });

    it('reports the adopted ack and computes the pending replan from the events after it', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema2 });
      const decision = await s.shouldInterrupt(ids[1]);
      expect(decision).toMatchObject({
        needs_replan: true,
        latest_event_id: ids[3],
        has_new_events: true,
        changed_files: ['.pulse/plan.md', '.pulse/guidance.md'],
        pending_replan_event_id: ids[3],
        pending_replan_files: ['.pulse/guidance.md'],
        last_acknowledged_event_id: ids[1],
        last_acknowledged_plan_sha256: ackedPlanSha,
      });
      const stale = await s.ack(ids[0]!);
      expect(stale).toMatchObject({
        accepted: false,
        code: 'stale_event',
        acknowledged_event_id: ids[1],
        plan_sha256: ackedPlanSha,
      });
      // Loading a schema-2 state rewrites nothing.
      expect(await s.state()).toEqual(schema2(s.project));
    });

    it('keeps unknown keys when it rewrites state.json, after a new event and after an ack', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema2 });
      const task = '# Task\n\nPort the parser, then the printer.\n';
      await save(s.file('task.md'), task);
      const decision = await s.shouldInterrupt();
      expect(decision.latest_event_id).not.toBe(ids[3]);
      const afterEvent = await s.state();
      expect(afterEvent.last_hashes['task.md']).toBe(sha256(task));
      expect(afterEvent).toMatchObject(extra);
      expect(afterEvent.initialized_at).toBe('2025-02-10T13:59:00.000000Z');
      expect(afterEvent.last_acknowledged_event_id).toBe(ids[1]);

      const ack = await s.ack(ids[3]!);
      expect(ack).toMatchObject({
        accepted: true,
        acknowledged_event_id: ids[3],
        plan_sha256: sha256(FILES.plan),
      });
      const afterAck = await s.state();
      expect(afterAck).toMatchObject(extra);
      expect(afterAck.project_root).toBe(s.project);
      expect(afterAck.last_acknowledged_event_id).toBe(ids[3]);
      expect(afterAck.last_acknowledged_plan_sha256).toBe(sha256(FILES.plan));
      expect(afterAck.last_acknowledged_at).not.toBe('2025-02-10T14:10:00.123456+00:00');
      expectReadableState(afterAck);
    });

    it('keeps the adopted history and our ack across a restart', async () => {
      const s = await adopt({ files: currentFiles, events, state: schema2 });
      const pending = (await s.shouldInterrupt()).pending_replan_event_id!;
      expect(pending).toBe(ids[3]);
      expect((await s.ack(pending)).accepted).toBe(true);
      await s.restart();
      const decision = await s.shouldInterrupt(ids[3]);
      expect(decision).toMatchObject({
        needs_replan: false,
        latest_event_id: ids[3],
        has_new_events: false,
        pending_replan_event_id: null,
        last_acknowledged_event_id: ids[3],
        last_acknowledged_plan_sha256: sha256(FILES.plan),
      });
      expect(await s.state()).toMatchObject(extra);
      const again = await s.ack(ids[3]!);
      expect(again).toMatchObject({ accepted: false, code: 'no_pending_replan' });
    });
  });

  describe('what we write stays readable by PulseAgent', () => {
    it('appends events after the adopted lines, ids sorting after them even when the old clock ran ahead', async () => {
      // A log whose clock was ahead of ours, and a guidance.md edited while no sidecar ran.
      const events: PulseAgentEvent[] = [
        modified('evt_20990101T000000000000Z_e0e1e2e3', '2099-01-01T00:00:00+00:00', 'task.md', FILES.task),
      ];
      const s = await adopt({
        files: currentFiles,
        events,
        state: (project) => ({
          schema_version: 2,
          project_root: project,
          initialized_at: '2098-12-31T23:59:59+00:00',
          last_hashes: { ...currentHashes(), 'guidance.md': sha256(FILES.guidanceOld) },
          last_acknowledged_event_id: null,
          last_acknowledged_plan_sha256: null,
          last_acknowledged_at: null,
        }),
      });
      const decision = await s.shouldInterrupt(events[0]!.id);
      expect(decision.changed_files).toEqual(['.pulse/guidance.md']);
      expect(decision.needs_replan).toBe(true);
      const pending = decision.pending_replan_event_id!;
      expect(pending > events[0]!.id).toBe(true);

      await save(s.file('plan.md'), '# Plan\n\nReplanned.\n');
      expect((await s.ack(pending)).accepted).toBe(true);

      const text = await readFile(s.file('events.jsonl'), 'utf8');
      expect(text.startsWith(pulseAgentLine(events[0]!))).toBe(true);
      expectReadableEvents(text);
      const lines = text.trimEnd().split('\n');
      expect(lines).toHaveLength(3);
      const written = lines.map((line) => JSON.parse(line));
      expect(written.map((e) => e.id)).toEqual([...written.map((e) => e.id)].sort());
      expect(written[1]).toMatchObject({ id: pending, kind: 'modified', path: '.pulse/guidance.md' });
      expect(written[2]).toMatchObject({
        kind: 'modified',
        path: '.pulse/plan.md',
        sha256: sha256('# Plan\n\nReplanned.\n'),
      });

      const state = await s.state();
      expectReadableState(state);
      expect(state.last_hashes).toEqual({ ...currentHashes(), 'plan.md': sha256('# Plan\n\nReplanned.\n') });
      expect(state.last_acknowledged_event_id).toBe(pending);
    });

    it('writes a fresh project in the shape PulseAgent reads, deletions included', async () => {
      const project = await tempProject('pulse-compat-');
      cleanups.push(() => removeProject(project));
      const daemon = await startDaemon(project);
      cleanups.push(() => daemon.stop());
      const client = await connectClient(daemon.url);
      cleanups.push(() => client.close());
      const file = (name: string) => join(project, '.pulse', name);

      await save(file('constraints.md'), '# Constraints\n\nRead only.\n');
      await rm(file('task.md'));
      const decision = await callTool(client, 'pulse_should_interrupt');
      expect(decision.pending_replan_files).toEqual(['.pulse/constraints.md']);
      const ack = await callTool(client, 'pulse_ack_replan', { event_id: decision.pending_replan_event_id });
      expect(ack.accepted).toBe(true);

      const state = JSON.parse(await readFile(file('state.json'), 'utf8'));
      expectReadableState(state);
      expect(state.project_root).toBe(project);
      expect(state.last_hashes['task.md']).toBeNull();
      expect(state.last_acknowledged_at).toMatch(ISO_DATETIME);
      const text = await readFile(file('events.jsonl'), 'utf8');
      expectReadableEvents(text);
      expect(text).toContain('"kind":"deleted","path":".pulse/task.md","sha256":null,"size":null}');
    });
  });
});
