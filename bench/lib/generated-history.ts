import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  isInvalidating,
  PULSE_FILES,
  type PulseEvent,
  type PulseFileName,
} from '../../machines/pulse-files.js';
import { formatMicros } from '../../src/store/event-id.js';
import { eventLine } from '../../src/store/event-log-file.js';
import { TEMPLATES } from '../../src/store/pulse-folder.js';

/** A project folder whose `.pulse/` holds a generated history, as a long-lived PulseAgent leaves it. */
export interface GeneratedHistory {
  project: string;
  events: number;
  latestEventId: string | null;
  acknowledgedEventId: string | null;
  logBytes: number;
}

/** How often each file is edited: the agent rewrites its plan most, the user edits guidance now and then. */
const PATH_WEIGHTS: ReadonlyArray<[PulseFileName, number]> = [
  ['plan.md', 0.55],
  ['task.md', 0.15],
  ['guidance.md', 0.2],
  ['constraints.md', 0.1],
];

/** Typical sizes in bytes of each file's body. */
const SIZES: Record<PulseFileName, [number, number]> = {
  'task.md': [200, 1500],
  'guidance.md': [100, 2000],
  'constraints.md': [100, 1200],
  'plan.md': [300, 6000],
};

/** Only the agent's files are ever deleted (and re-created on their next edit). */
const DELETABLE: ReadonlySet<PulseFileName> = new Set(['plan.md', 'task.md']);
const DELETE_RATE = 0.01;

/** The last tenth of the log holds only task/plan edits: the agent working after its last ack. */
const QUIET_TAIL = 0.1;

/** mulberry32: a small seeded generator, so every run writes the same history. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const FILLER = 'Keep the change small; run the tests; ask before touching the public API. '.repeat(100);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Writes `<project>/.pulse/` with `count` events in `events.jsonl` (PulseAgent's line format,
 * ids increasing, real hashes and sizes of each file version), the four files at their last
 * logged version, and a schema-2 state.json whose hashes match them, so the daemon logs
 * nothing on start. The latest guidance/constraints event is acknowledged: no replan is pending.
 */
export const writeHistory = async (project: string, count: number, seed = 1): Promise<GeneratedHistory> => {
  const random = seeded(seed + count);
  const between = (low: number, high: number) => low + Math.floor(random() * (high - low + 1));
  const hex8 = () => between(0, 0xffffffff).toString(16).padStart(8, '0');
  const dir = join(project, '.pulse');
  await mkdir(dir, { recursive: true });

  const revisions: Record<PulseFileName, number> = {
    'task.md': 0,
    'guidance.md': 0,
    'constraints.md': 0,
    'plan.md': 0,
  };
  const contents: Record<PulseFileName, string | null> = { ...TEMPLATES };
  const versionOf = (name: PulseFileName): string => {
    revisions[name]++;
    const [low, high] = SIZES[name];
    return `${TEMPLATES[name]}\n<!-- revision ${revisions[name]} -->\n${FILLER.slice(0, between(low, high))}\n`;
  };
  const pick = (quiet: boolean): PulseFileName => {
    const weights = quiet ? PATH_WEIGHTS.filter(([name]) => DELETABLE.has(name)) : PATH_WEIGHTS;
    const total = weights.reduce((sum, [, w]) => sum + w, 0);
    let r = random() * total;
    for (const [name, weight] of weights) {
      r -= weight;
      if (r < 0) return name;
    }
    return weights[weights.length - 1]![0];
  };

  // Last event about a minute ago, gaps of 1 ms to 10 s before it.
  const gaps = Array.from({ length: count }, () => BigInt(between(1_000, 10_000_000)));
  const end = BigInt(Date.now() - 60_000) * 1000n + BigInt(between(0, 999));
  let micros = end - gaps.reduce((sum, gap) => sum + gap, 0n);
  const initializedAt = formatMicros(micros - 1_000_000n).iso;

  const lines: string[] = [];
  const quietFrom = count - Math.floor(count * QUIET_TAIL);
  let ack: { eventId: string; planSha256: string | null; at: string } | null = null;
  let latest: PulseEvent | null = null;
  for (let i = 0; i < count; i++) {
    micros += gaps[i]!;
    const remaining = count - i;
    const deleted = PULSE_FILES.filter((name) => contents[name] === null);
    const name = remaining <= deleted.length ? deleted[0]! : pick(i >= quietFrom);
    let kind: PulseEvent['kind'];
    if (contents[name] === null) {
      kind = 'created';
      contents[name] = versionOf(name);
    } else if (DELETABLE.has(name) && remaining > 10 && random() < DELETE_RATE) {
      kind = 'deleted';
      contents[name] = null;
    } else {
      kind = 'modified';
      contents[name] = versionOf(name);
    }
    const text = contents[name];
    const { iso, compact } = formatMicros(micros);
    latest = {
      id: `evt_${compact}_${hex8()}`,
      timestamp: iso,
      kind,
      path: `.pulse/${name}`,
      sha256: text === null ? null : sha256(text),
      size: text === null ? null : Buffer.byteLength(text),
    };
    lines.push(eventLine(latest));
    if (isInvalidating(latest)) {
      const plan = contents['plan.md'];
      const at = formatMicros(micros + 500_000n).iso;
      ack = { eventId: latest.id, planSha256: plan === null ? null : sha256(plan), at };
    }
  }

  const hashes: Record<string, string | null> = {};
  for (const name of PULSE_FILES) {
    const text = contents[name];
    if (text === null) throw new Error(`writeHistory: ${name} ended deleted; the daemon would re-create it.`);
    await writeFile(join(dir, name), text);
    hashes[name] = sha256(text);
  }
  const log = lines.join('');
  await writeFile(join(dir, 'events.jsonl'), log);
  const state = {
    schema_version: 2,
    project_root: project,
    initialized_at: initializedAt,
    last_hashes: hashes,
    last_acknowledged_event_id: ack?.eventId ?? null,
    last_acknowledged_plan_sha256: ack?.planSha256 ?? null,
    last_acknowledged_at: ack?.at ?? null,
  };
  await writeFile(join(dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
  return {
    project,
    events: count,
    latestEventId: latest?.id ?? null,
    acknowledgedEventId: ack?.eventId ?? null,
    logBytes: Buffer.byteLength(log),
  };
};
