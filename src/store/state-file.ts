import type { ClientInfo } from '../../machines/agent-identity.js';
import type { AckRecord, PulseFileName } from '../../machines/pulse-files.js';
import { ACK_HISTORY, type ReplanAck } from '../../machines/replan-acks.js';
import { recordsAgents, type SavedAgent, type TieWay } from '../../machines/replan-agents.js';
import { formatMicros, systemMicroClock } from './event-id.js';
import { readJournal } from './read-bounded.js';
import { replaceFile } from './replace-file.js';

type Raw = Record<string, unknown>;

/** What we use of `state.json`; every other key is kept as it was. */
export interface LoadedState {
  lastHashes: Partial<Record<PulseFileName, string | null>>;
  ack: AckRecord | null;
  /** The agents working when it was written, and what each owed (our key; PulseAgent ignores it). */
  agents: SavedAgent[];
  /** The latest acks with their replans (our key; PulseAgent ignores it). */
  acks: ReplanAck[];
  warnings: string[];
}

const ACK_KEYS = [
  'last_acknowledged_event_id',
  'last_acknowledged_plan_sha256',
  'last_acknowledged_at',
] as const;

const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);

const ackOf = (raw: Raw): AckRecord | null => {
  const eventId = stringOrNull(raw.last_acknowledged_event_id);
  if (eventId === null) return null;
  return {
    eventId,
    planSha256: stringOrNull(raw.last_acknowledged_plan_sha256),
    at: stringOrNull(raw.last_acknowledged_at) ?? '',
  };
};

const TIE_WAYS: ReadonlySet<unknown> = new Set<TieWay>([
  'tool-output',
  'agent-argument',
  'hook-announced',
  'only-pair',
]);

/** The `agents` key as pulse writes it; an entry that does not read as one is dropped. */
const agentsOf = (raw: Raw): SavedAgent[] => {
  if (!Array.isArray(raw.agents)) return [];
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  return raw.agents.flatMap((entry: unknown): SavedAgent[] => {
    if (typeof entry !== 'object' || entry === null) return [];
    const e = entry as Raw;
    const parties = strings(e.parties);
    if (parties.length === 0) return [];
    return [
      {
        parties,
        owes_event_id: stringOrNull(e.owes_event_id),
        owes_files: strings(e.owes_files),
        acked_at: stringOrNull(e.acked_at),
        tied_by: TIE_WAYS.has(e.tied_by) ? (e.tied_by as TieWay) : null,
      },
    ];
  });
};

/** A saved `clientInfo`: two strings, or null (state.json is the repository's, so it is read as untrusted). */
const clientOrNull = (value: unknown): ClientInfo | null => {
  if (typeof value !== 'object' || value === null) return null;
  const { name, version } = value as Raw;
  return typeof name === 'string' && typeof version === 'string' ? { name, version } : null;
};

const clientField = (client: ClientInfo | null) => (client === null ? {} : { client });

const numberOr0 = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : 0;

/** The `acks` key of a state.json as pulse writes it; an entry that does not read as one is dropped, and only the latest are kept. */
export const acksOf = (raw: Readonly<Raw>): ReplanAck[] => {
  if (!Array.isArray(raw.acks)) return [];
  return raw.acks
    .flatMap((entry: unknown): ReplanAck[] => {
      if (typeof entry !== 'object' || entry === null) return [];
      const e = entry as Raw;
      const agent = stringOrNull(e.agent);
      const eventId = stringOrNull(e.event_id);
      const at = stringOrNull(e.at);
      if (agent === null || eventId === null || at === null) return [];
      const strings = (value: unknown): string[] =>
        Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
      return [
        {
          agent,
          parties: strings(e.parties),
          ...clientField(clientOrNull(e.client)),
          event_id: eventId,
          files: strings(e.files),
          at,
          owed_since: stringOrNull(e.owed_since),
          plan_before_sha256: stringOrNull(e.plan_before_sha256),
          plan_after_sha256: stringOrNull(e.plan_after_sha256),
          plan_changed: e.plan_changed === true,
          added: numberOr0(e.added),
          removed: numberOr0(e.removed),
          summary: stringOrNull(e.summary) ?? '',
          diff: stringOrNull(e.diff),
        },
      ];
    })
    .slice(-ACK_HISTORY);
};

/** Pulls what it can out of a state.json that no longer parses, key by key. */
const salvage = (text: string): Raw => {
  const raw: Raw = {};
  for (const key of ACK_KEYS) {
    const match = new RegExp(`"${key}"\\s*:\\s*"([^"]*)"`).exec(text);
    if (match) raw[key] = match[1];
  }
  return raw;
};

const sortedJson = (raw: Raw): string => {
  const sorted: Raw = {};
  for (const key of Object.keys(raw).sort()) sorted[key] = raw[key];
  return `${JSON.stringify(sorted, null, 2)}\n`;
};

/**
 * `state.json`, written crash-safely (temp file, fsync, rename) and one write at a time.
 * Keys we do not know are kept; schema 1 is migrated to 2 on load.
 */
export class StateFile {
  #raw: Raw;
  #writes: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    raw: Raw,
  ) {
    this.#raw = raw;
  }

  /** A fresh state for a project, as PulseAgent's first start writes it. */
  static fresh(path: string, projectRoot: string, lastHashes: Record<string, string | null>): StateFile {
    return new StateFile(path, {
      schema_version: 2,
      project_root: projectRoot,
      initialized_at: formatMicros(systemMicroClock()).iso,
      last_hashes: lastHashes,
      last_acknowledged_event_id: null,
      last_acknowledged_plan_sha256: null,
      last_acknowledged_at: null,
    });
  }

  /** Loads and migrates; a corrupt file is kept as `state.json.bak` and what can be read of it is recovered. */
  static async load(path: string, projectRoot: string): Promise<{ file: StateFile; state: LoadedState }> {
    const warnings: string[] = [];
    const bytes = await readJournal(path);
    const text = bytes?.toString('utf8') ?? null;
    let raw: Raw;
    if (bytes === null || text === null) {
      raw = StateFile.fresh(path, projectRoot, {}).#raw;
    } else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {}
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        raw = parsed as Raw;
      } else {
        // Written from what was read, never copied by name: a planted state.json.bak link is replaced, not written through.
        await replaceFile(`${path}.bak`, bytes);
        raw = { ...StateFile.fresh(path, projectRoot, {}).#raw, ...salvage(text) };
        const recovered = ackOf(raw) ? `the last ack (${raw.last_acknowledged_event_id})` : 'no ack';
        warnings.push(
          `state.json was corrupt; kept it as state.json.bak and recovered ${recovered}. File hashes are rebuilt from events.jsonl; files it never logged are taken as they are now.`,
        );
      }
    }
    const file = new StateFile(path, raw);
    const migrated = file.#migrate();
    if (migrated) warnings.push(`state.json schema ${migrated} migrated to schema 2.`);
    const hashes =
      typeof raw.last_hashes === 'object' && raw.last_hashes !== null ? (raw.last_hashes as Raw) : {};
    const lastHashes: LoadedState['lastHashes'] = {};
    for (const [name, value] of Object.entries(hashes)) {
      lastHashes[name as PulseFileName] = stringOrNull(value);
    }
    if (text === null || migrated || warnings.length > 0) await file.#write();
    const saved = file.#raw;
    return {
      file,
      state: { lastHashes, ack: ackOf(saved), agents: agentsOf(saved), acks: acksOf(saved), warnings },
    };
  }

  #migrate(): number | null {
    const version = this.#raw.schema_version;
    if (version === 2) return null;
    for (const key of ACK_KEYS) if (!(key in this.#raw)) this.#raw[key] = null;
    this.#raw.schema_version = 2;
    return typeof version === 'number' ? version : 0;
  }

  get raw(): Readonly<Raw> {
    return this.#raw;
  }

  setHashes(lastHashes: Record<string, string | null>): Promise<void> {
    return this.update({ last_hashes: lastHashes });
  }

  /**
   * Writes the last ack (PulseAgent's fields) and the agents beside it, always the whole file (so
   * a write that lands clears a failed one). The agents go in once `recordsAgents` says so, and
   * stay; until then a state.json keeps PulseAgent's keys and the acks only.
   */
  setReplan(
    ack: AckRecord | null,
    agents: readonly SavedAgent[],
    acks: readonly ReplanAck[] = [],
  ): Promise<void> {
    const keepAgents = recordsAgents(agents) || 'agents' in this.#raw;
    return this.update({
      ...(acks.length > 0 || 'acks' in this.#raw ? { acks } : {}),
      ...(ack === null
        ? {}
        : {
            last_acknowledged_event_id: ack.eventId,
            last_acknowledged_plan_sha256: ack.planSha256,
            last_acknowledged_at: ack.at,
          }),
      ...(keepAgents ? { agents } : {}),
    });
  }

  /** Merges `patch` and writes; writes are serialised, so none overtakes another. */
  update(patch: Raw): Promise<void> {
    this.#raw = { ...this.#raw, ...patch };
    const write = this.#writes.then(() => this.#write());
    this.#writes = write.catch(() => {});
    return write;
  }

  #write(): Promise<void> {
    return replaceFile(this.path, sortedJson(this.#raw));
  }
}
