import type { PolledSource, ToolSafety } from './external.js';
import type { GateSettings } from './gate-settings.js';
import type { Asking } from './reply.js';

/** A configured server as status shows it: its strings as written (`${VAR}` unexpanded), so never a secret. */
export interface ServerSummary {
  name: string;
  transport: 'stdio' | 'http';
  /** The command line, or the URL with any password and query values masked. */
  target: string;
  /** The names of its `env` variables (stdio); their values are never shown. */
  env: string[];
  /** The names of the headers it sends (http), `Authorization` for a bearer token included; never their values. */
  headers: string[];
  timeoutMs: number;
  /** Why it cannot run (a `${VAR}` not set), or null. */
  disabled: string | null;
}

/**
 * Who judges external events: the rule thinker (per-source urgency and rules, against the
 * threshold), the agent itself (it receives every event and says in its ack what it did), a
 * model behind an OpenAI-compatible endpoint, or the connected agent's model through MCP sampling.
 */
export type ThinkerKind = 'rules' | 'agent' | 'model' | 'sampling';

/** The thinker sources.json asks for, as status names it: never its endpoint or key. */
export interface ThinkerSetting {
  kind: ThinkerKind;
  /** The model's name with `"thinker": "model"`, else null. */
  model: string | null;
}

/**
 * Whether sources.json may be acted on: there is none, its user trusted these exact bytes (their
 * hash), or not, and then nothing in it runs: no server, no URL, no `${VAR}`, no model endpoint.
 */
export type SourcesTrust =
  | { status: 'none' }
  | { status: 'trusted'; hash: string }
  | {
      status: 'untrusted';
      hash: string;
      /** The one command that trusts it. */
      command: string;
      /** The model endpoint it names, as written and masked, which is not asked either. */
      model: string | null;
    };

/** What the sources supervisor keeps of a loaded config: no server secrets, only what pollers need. */
export interface LoadedSources {
  sources: PolledSource[];
  servers: ServerSummary[];
  /** Per source, a string that changes iff the poller must restart (its config or its server's). */
  fingerprints: Record<string, string>;
  warnings: string[];
  /** The reflection gate's settings from the same file (defaults where it says nothing). */
  gate: GateSettings;
  thinker: ThinkerSetting;
  trust: SourcesTrust;
}

/** An item as a source test shows it. */
export interface TestedItem {
  item_id: string;
  title: string;
  starts_at: string | null;
}

/** The keys found at one place of a tool's answer (`where`: "the top level", "structuredContent", …). */
export interface KeysFound {
  where: string;
  keys: string[];
}

/** What the tool answered, as JSON text cut to a bound, and the keys found in it. */
export interface RawAnswer {
  text: string;
  /** How many characters were cut off the end (0: the whole answer). */
  cut: number;
  keys: KeysFound[];
}

/** One test of one source: the items read from one call of its tool, or why none. Marks nothing seen. */
export interface SourceTestResult {
  source: string;
  server: string;
  ok: boolean;
  error: string | null;
  /** The first items read (at most `TESTED_ITEMS_SHOWN`). */
  items: TestedItem[];
  /** How many items were read in all. */
  item_count: number;
  /** With `raw`: what the tool answered, when it answered. */
  raw: RawAnswer | null;
  /** What the tool says of its side effects in `tools/list`; null when that could not be read. */
  tool: ToolSafety | null;
}

/** The most items a test result lists, so that a huge answer stays a readable one. */
export const TESTED_ITEMS_SHOWN = 200;

/** The answer to a `sources.test`: a result, or why no test ran. */
export type SourceTestReply =
  | { result: SourceTestResult }
  | { refused: 'unknown' | 'busy' | 'untrusted'; error: string };

export interface SourcesContext {
  sources: PolledSource[];
  servers: ServerSummary[];
  fingerprints: Record<string, string>;
  warnings: string[];
  /** The thinker of the last good config (the rules before one is loaded). */
  thinker: ThinkerSetting;
  /** Whether the file loaded last may be acted on. */
  trust: SourcesTrust;
  /** The last config error; while it holds, the last good config keeps running, if there was one. */
  error: string | null;
  /** Whether a config was ever loaded: pollers then run for the last good one through a broken edit. */
  goodConfigLoaded: boolean;
  loads: number;
  /** The tests running, each with the request it answers and the source it tests. */
  testing: RunningTest[];
}

/** A source test that is running: its child's id, who asked, and what it tests. */
export interface RunningTest {
  actorId: string;
  asking: Asking<SourceTestReply>;
  source: string;
  server: string;
}

export type SourcesEvent =
  | { type: 'config.changed' }
  | { type: 'trust.changed' }
  | ({ type: 'sources.test'; source: string; raw: boolean } & Asking<SourceTestReply>)
  | { type: `xstate.done.actor.test.${number}`; output: SourceTestResult; actorId: string }
  | { type: `xstate.error.actor.test.${number}`; error: unknown; actorId: string };

export const pollerId = (source: string): `poller:${string}` => `poller:${source}`;

/** The supervisor's context at start: no config loaded, no test run. */
export const INITIAL_SOURCES_CONTEXT: SourcesContext = {
  sources: [],
  servers: [],
  fingerprints: {},
  warnings: [],
  thinker: { kind: 'rules', model: null },
  trust: { status: 'none' },
  error: null,
  goodConfigLoaded: false,
  loads: 0,
  testing: [],
};
