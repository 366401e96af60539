import type { GateContext } from '../../machines/gate-context.js';
import type { ThinkerSetting } from '../../machines/sources-context.js';

/** Who the configured thinker is, and who judges in its place while it cannot (`note` says why). */
export interface Judge {
  /** As sources.json asks: `rules`, `agent`, `model qwen2.5:7b-instruct`, `sampling`. */
  configured: string;
  /** Who judges the next thought: `rules`, `model qwen2.5:7b-instruct`, `sampling (claude-code)`. */
  by: string;
  /** Why another thinker than the configured one judges; null when it is the one. */
  note: string | null;
}

const NO_SAMPLING_CLIENT =
  'no connected MCP client declared the sampling capability: the rule thinker judged instead';

/** The same, said of the present: what status shows until a client that can sample connects. */
const NO_SAMPLING_NOW =
  'no connected 2025-era MCP session offers sampling (2026-07-28 clients cannot be asked: pulse judges between their requests); the rules judge until one connects';

/** Who judges with `setting`, while `sampler` (a connected client's name, or null) can sample. */
export const judgeOf = (setting: ThinkerSetting, sampler: string | null): Judge => {
  switch (setting.kind) {
    case 'model': {
      const name = `model ${setting.model}`;
      return { configured: name, by: name, note: null };
    }
    case 'sampling':
      return sampler === null
        ? { configured: 'sampling', by: 'rules', note: NO_SAMPLING_CLIENT }
        : { configured: 'sampling', by: `sampling (${sampler})`, note: null };
    case 'agent':
      return { configured: 'agent', by: 'agent (rules order the events)', note: null };
    case 'rules':
      return { configured: 'rules', by: 'rules', note: null };
  }
};

/** The thinker in force, as `/status`, `pulse status` and the status page show it. */
export interface ThinkerStatus {
  /** What sources.json asks for. */
  configured: string;
  /** Who judges now; null while a failing thinker waits to be asked again and nobody judges. */
  judging: string | null;
  /** Why it is not the configured thinker, or why nobody judges, in words; null when all is as configured. */
  reason: string | null;
  /** When a failing thinker is asked again (sooner when new events arrive, unless it sent a Retry-After). */
  retry_at: string | null;
}

/** A time of day in UTC, `14:02:10 UTC`: a retry is at most 5 minutes away. */
const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 19)} UTC`;

const times = (n: number) => `${n} time${n === 1 ? '' : 's'}`;

/** What failed, by the kind of thinker configured. */
const failing = (setting: ThinkerSetting) =>
  setting.kind === 'model'
    ? `the model endpoint (${setting.model})`
    : setting.kind === 'sampling'
      ? "the connected agent's model (sampling)"
      : 'the thinker';

/**
 * Who judges now and why: the configured thinker; the rules while `"thinker": "sampling"` has no
 * client that can sample; nobody while a thinker that failed waits to be asked again (its
 * events wait in the inbox, each failed thought costing them an attempt).
 */
export const thinkerInForce = (
  setting: ThinkerSetting,
  sampler: string | null,
  gate: Pick<GateContext, 'failedInARow' | 'lastFailure' | 'maxAttempts'> & { asking: boolean },
): ThinkerStatus => {
  const judge = judgeOf(setting, sampler);
  const failure = gate.lastFailure;
  if (judge.note !== null || gate.failedInARow === 0 || failure === null) {
    return {
      configured: judge.configured,
      judging: judge.by,
      reason: judge.note === null ? null : NO_SAMPLING_NOW,
      retry_at: null,
    };
  }
  const when = gate.asking
    ? 'it is being asked again now'
    : failure.kind === 'answer' && failure.retryAfterMs === null
      ? `its answer was unusable, so it is asked again at the next reflection, at ${clock(failure.retryAt)}`
      : failure.retryAfterMs !== null
        ? `it asked to be left alone (Retry-After), so it is asked again at ${clock(failure.retryAt)}`
        : `it is asked again at ${clock(failure.retryAt)}, or sooner when new events arrive`;
  return {
    configured: judge.configured,
    judging: gate.asking ? judge.by : null,
    reason: `${failing(setting)} failed ${times(gate.failedInARow)} in a row (${failure.reason}); ${when}. Meanwhile nobody judges: the events wait in the inbox, each failed thought costing them an attempt (dead letters after ${gate.maxAttempts}).`,
    retry_at: gate.asking ? null : new Date(failure.retryAt).toISOString(),
  };
};

/** The thinker in force in one line: who judges, and when that is not the configured thinker, who does and why. */
export const thinkerLine = ({ configured, judging, reason }: ThinkerStatus): string =>
  reason === null
    ? (judging ?? configured)
    : `${configured} configured, ${judging ?? 'nobody'} judging now: ${reason}`;
