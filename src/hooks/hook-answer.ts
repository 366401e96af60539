import type { HookAgent } from './events.js';

// The one round trip between `pulse hook` and the daemon's `POST /hook`. Types only, so the hook
// process loads nothing for them.

/** What `pulse hook` asks the daemon. */
export interface HookQuestion {
  agent: HookAgent;
  event: string;
  /** The agent's session (Claude, Codex) or conversation (Cursor) id: announcements are once per session. */
  session: string;
  /** This answer can carry context to the agent: announce a delivery it has not been told of yet. */
  announce: boolean;
}

/** What the daemon answers: the replan it waits for, and a delivery to announce. */
export interface HookAnswer {
  project: string;
  pending: { event_id: string; files: string[] } | null;
  /** Set only when asked to announce and this session has not been told of this delivery yet. */
  attention: { delivery_id: string; headlines: string[] } | null;
}
