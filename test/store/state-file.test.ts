import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReplanAck } from '../../machines/replan-acks.js';
import { StateFile } from '../../src/store/state-file.js';
import { removeProject, tempProject } from '../support/daemon.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeProject));
});

const stateIn = async (content?: string) => {
  const dir = await tempProject('pulse-state-');
  dirs.push(dir);
  const path = join(dir, 'state.json');
  if (content !== undefined) await writeFile(path, content);
  return { dir, path };
};

const onDisk = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;

const HASHES = {
  'task.md': 'a'.repeat(64),
  'guidance.md': 'b'.repeat(64),
  'constraints.md': 'c'.repeat(64),
  'plan.md': 'd'.repeat(64),
};

const SCHEMA_1 = {
  schema_version: 1,
  project_root: '/home/me/project',
  initialized_at: '2026-01-01T00:00:00.000001+00:00',
  last_hashes: HASHES,
  written_by: 'PulseAgent 0.1.0',
};

const ACK = {
  eventId: 'evt_20261129T101500123456Z_1a2b3c4d',
  planSha256: 'e'.repeat(64),
  at: '2026-11-29T10:16:00Z',
};

describe('StateFile', () => {
  it('migrates schema 1 to schema 2 on load, adding null ack keys and keeping the keys it does not know', async () => {
    const { path } = await stateIn(JSON.stringify(SCHEMA_1));
    const { state } = await StateFile.load(path, '/elsewhere');
    expect(state.warnings).toEqual(['state.json schema 1 migrated to schema 2.']);
    expect(state.ack).toBeNull();
    expect(state.lastHashes).toEqual(HASHES);
    expect(await onDisk(path)).toEqual({
      ...SCHEMA_1,
      schema_version: 2,
      last_acknowledged_event_id: null,
      last_acknowledged_plan_sha256: null,
      last_acknowledged_at: null,
    });
  });

  it('leaves a valid schema 2 file untouched on load, byte for byte', async () => {
    const text = `{"schema_version":2,"last_hashes":{},"zeta":1,"last_acknowledged_event_id":"${ACK.eventId}","alpha":[1]}`;
    const { path } = await stateIn(text);
    const { state } = await StateFile.load(path, '/p');
    expect(state.warnings).toEqual([]);
    expect(state.ack).toEqual({ eventId: ACK.eventId, planSha256: null, at: '' });
    expect(await readFile(path, 'utf8')).toBe(text);
  });

  it('keeps unknown keys through setReplan and setHashes', async () => {
    const { path } = await stateIn(
      JSON.stringify({ ...SCHEMA_1, schema_version: 2, future: { nested: [1, 2] } }),
    );
    const { file } = await StateFile.load(path, '/p');
    await file.setReplan(ACK, []);
    await file.setHashes({ ...HASHES, 'plan.md': null });
    const saved = await onDisk(path);
    expect(saved).toMatchObject({
      written_by: 'PulseAgent 0.1.0',
      future: { nested: [1, 2] },
      project_root: '/home/me/project',
      last_acknowledged_event_id: ACK.eventId,
      last_acknowledged_plan_sha256: ACK.planSha256,
      last_acknowledged_at: ACK.at,
      last_hashes: { ...HASHES, 'plan.md': null },
    });
    const reloaded = await StateFile.load(path, '/p');
    expect(reloaded.state.ack).toEqual(ACK);
  });

  it('keeps the acks with their replans beside PulseAgent’s keys, reads them back, and drops an entry that does not read as one', async () => {
    const { path } = await stateIn(JSON.stringify({ ...SCHEMA_1, schema_version: 2 }));
    const { file } = await StateFile.load(path, '/p');
    const replanned: ReplanAck = {
      agent: 'session:a',
      parties: ['session:a', 'hook:claude:s1'],
      event_id: ACK.eventId,
      files: ['.pulse/guidance.md'],
      at: ACK.at,
      owed_since: '2026-11-29T10:15:00.000Z',
      plan_before_sha256: 'd'.repeat(64),
      plan_after_sha256: ACK.planSha256,
      plan_changed: true,
      added: 1,
      removed: 1,
      summary: 'the plan changed: 1 line added, 1 removed',
      diff: '--- plan.md at the change\n+++ plan.md at the ack\n@@ -1 +1 @@\n-a\n+b',
    };
    await file.setReplan(ACK, [], [replanned]);
    const saved = await onDisk(path);
    // PulseAgent reads its own keys, as it wrote them.
    expect(saved).toMatchObject({
      schema_version: 2,
      last_acknowledged_event_id: ACK.eventId,
      last_acknowledged_plan_sha256: ACK.planSha256,
      last_acknowledged_at: ACK.at,
      written_by: 'PulseAgent 0.1.0',
    });
    expect(saved.acks).toEqual([replanned]);
    await writeFile(path, JSON.stringify({ ...saved, acks: [replanned, { agent: 7 }, 'junk'] }));
    expect((await StateFile.load(path, '/p')).state.acks).toEqual([replanned]);
  });

  it('keeps the client an ack was made by, and drops a client that is not two strings', async () => {
    const { path } = await stateIn(JSON.stringify({ ...SCHEMA_1, schema_version: 2 }));
    const base = { agent: 'session:a', parties: ['session:a'], event_id: ACK.eventId, at: ACK.at };
    await writeFile(
      path,
      JSON.stringify({
        ...SCHEMA_1,
        acks: [
          { ...base, client: { name: 'claude-code', version: '2.1.332' } },
          { ...base, client: { name: { toString: 'x' }, version: 1 } },
          { ...base, client: 'claude-code' },
        ],
      }),
    );
    const acks = (await StateFile.load(path, '/p')).state.acks;
    expect(acks.map((ack) => ack.client)).toEqual([
      { name: 'claude-code', version: '2.1.332' },
      undefined,
      undefined,
    ]);
    expect(acks.every((ack) => !('client' in ack) || ack.client?.name === 'claude-code')).toBe(true);
  });

  it('serialises concurrent updates: the file ends up with every patch', async () => {
    const { path } = await stateIn(JSON.stringify({ ...SCHEMA_1, schema_version: 2 }));
    const { file } = await StateFile.load(path, '/p');
    const patches = Array.from({ length: 30 }, (_, i) => file.update({ [`key_${i}`]: i }));
    await Promise.all([...patches, file.setReplan(ACK, []), file.setHashes(HASHES)]);
    const saved = await onDisk(path);
    for (let i = 0; i < 30; i++) expect(saved[`key_${i}`], `key_${i}`).toBe(i);
    expect(saved.last_acknowledged_event_id).toBe(ACK.eventId);
    expect(saved.last_hashes).toEqual(HASHES);
    expect(saved.written_by).toBe('PulseAgent 0.1.0');
  });

  it('keeps writing after a failed write: one failure does not block the queue', async () => {
    const { dir } = await stateIn();
    const nested = join(dir, 'gone');
    await mkdir(nested);
    const path = join(nested, 'state.json');
    await writeFile(path, JSON.stringify({ schema_version: 2 }));
    const { file } = await StateFile.load(path, '/p');
    await rm(nested, { recursive: true });
    await expect(file.update({ first: 1 })).rejects.toThrow();
    await mkdir(nested);
    await file.update({ second: 2 });
    expect(await onDisk(path)).toMatchObject({ first: 1, second: 2, schema_version: 2 });
  });

  it('keeps a corrupt state.json as state.json.bak, warns, and salvages the last ack from its text', async () => {
    const torn = `{\n  "initialized_at": "2026-11-29T10:00:00Z",\n  "last_acknowledged_at": "${ACK.at}",\n  "last_acknowledged_event_id": "${ACK.eventId}",\n  "last_acknowledged_plan_sha256": "${ACK.planSha256}",\n  "last_hashes": {\n    "guid`;
    const { path } = await stateIn(torn);
    const { state } = await StateFile.load(path, '/project');
    expect(await readFile(`${path}.bak`, 'utf8')).toBe(torn);
    expect(state.ack).toEqual(ACK);
    expect(state.warnings).toEqual([
      expect.stringContaining(
        `state.json was corrupt; kept it as state.json.bak and recovered the last ack (${ACK.eventId})`,
      ),
    ]);
    // No hash is invented for a file: the caller must treat them as unknown.
    expect(state.lastHashes).toEqual({});
    const rewritten = await onDisk(path);
    expect(rewritten).toMatchObject({
      schema_version: 2,
      project_root: '/project',
      last_acknowledged_event_id: ACK.eventId,
      last_acknowledged_plan_sha256: ACK.planSha256,
    });
  });

  it('recovers from an empty or non-object state.json with no ack, keeping the original as .bak', async () => {
    for (const bad of ['', '[1,2]', '"text"', 'null']) {
      const { path } = await stateIn(bad);
      const { state } = await StateFile.load(path, '/project');
      expect(state.ack, JSON.stringify(bad)).toBeNull();
      expect(state.warnings, JSON.stringify(bad)).toEqual([expect.stringContaining('recovered no ack')]);
      expect(await readFile(`${path}.bak`, 'utf8')).toBe(bad);
      expect(await onDisk(path)).toMatchObject({ schema_version: 2, last_acknowledged_event_id: null });
    }
  });
});
