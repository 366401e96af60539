import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { CONTEXT_URI } from '../../src/mcp/context-resource.js';
import { type BenchDaemon, startDaemon } from '../lib/daemon.js';
import { connectSession, shouldInterrupt } from '../lib/session.js';
import { type Summary, summarize } from '../lib/stats.js';

export interface EditPlan {
  /** Rounds of write → call → ack, counting calls that do not see the write. */
  staleRounds: number;
  /** Rounds of write → notification, timed. */
  pushRounds: number;
}

export interface EditResult {
  staleReads: number;
  staleRounds: number;
  /** Write returned → `notifications/resources/updated` arrived in the client, in ms. */
  push: Summary;
  /** Rounds whose notification did not come within the limit. */
  pushLost: number;
  /** Write returned → the time in the logged event's id (when the daemon's scan stamped it), in ms. */
  detect: Summary;
}

/** The wall-clock time, in ms, an event id (`evt_YYYYMMDDTHHMMSSffffffZ_…`) was stamped at. */
export const stampedAt = (eventId: string): number => {
  const m = /^evt_(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{6})Z_/.exec(eventId);
  if (!m) throw new Error(`Not an event id: ${eventId}`);
  const [, y, mo, d, h, mi, s, micros] = m.map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) + micros! / 1000;
};

/** Past this a notification counts as lost. */
const PUSH_LIMIT_MS = 5_000;
/** No notification for this long: the burst of one write (or ack) is over. */
const QUIET_MS = 50;

/** The resource-updated notifications a session client receives, as promises to await. */
export const notificationsOf = (client: Client) => {
  let arrivals = 0;
  let waiter: (() => void) | null = null;
  client.setNotificationHandler('notifications/resources/updated', (notification) => {
    if (notification.params.uri !== CONTEXT_URI) return;
    arrivals++;
    waiter?.();
  });
  /** performance.now() when the next one arrives, or null past `limitMs`. */
  const next = (limitMs: number) =>
    new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        waiter = null;
        resolve(null);
      }, limitMs);
      waiter = () => {
        clearTimeout(timer);
        waiter = null;
        resolve(performance.now());
      };
    });
  /** Resolves once no notification came for QUIET_MS. */
  const quiet = async () => {
    for (;;) {
      const before = arrivals;
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      if (arrivals === before) return;
    }
  };
  return { next, quiet };
};

/** Acknowledges `eventId` as the session client; an error result throws. */
export const ackReplan = async (client: Client, eventId: string) => {
  const result = await client.callTool({ name: 'pulse_ack_replan', arguments: { event_id: eventId } });
  if (result.isError) throw new Error(`pulse_ack_replan failed: ${JSON.stringify(result.content)}`);
};

/**
 * Times what an agent sees of a user's edit to guidance.md, on the real daemon: whether the
 * next `pulse_should_interrupt` after the write returned shows the new pending replan, and how
 * long a subscribed session client waits for `notifications/resources/updated`.
 */
export const measureEditToAgent = async (
  project: string,
  plan: EditPlan,
  progress: (line: string) => void,
): Promise<EditResult> => {
  let daemon: BenchDaemon | null = null;
  let client: Client | null = null;
  try {
    daemon = await startDaemon(project, { startArgs: ['--log-level', 'warn'] });
    client = await connectSession(daemon.url);
    const notifications = notificationsOf(client);
    await client.subscribeResource({ uri: CONTEXT_URI });
    const guidance = join(project, '.pulse', 'guidance.md');
    let edits = 0;
    const edit = () => writeFile(guidance, `# Guidance\n\nEdit ${++edits}: keep the change small.\n`);
    let previous: string | null = (await shouldInterrupt(client, null)).pending_replan_event_id;

    /** The pending replan the daemon reports now, acknowledged; a call that missed the write is retried until it shows. */
    const takeAndAck = async (): Promise<boolean> => {
      let answer = await shouldInterrupt(client!, null);
      const fresh = answer.pending_replan_event_id !== null && answer.pending_replan_event_id !== previous;
      while (answer.pending_replan_event_id === null || answer.pending_replan_event_id === previous) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        answer = await shouldInterrupt(client!, null);
      }
      previous = answer.pending_replan_event_id;
      await ackReplan(client!, previous);
      return fresh;
    };

    let staleReads = 0;
    for (let round = 0; round < plan.staleRounds; round++) {
      await edit();
      if (!(await takeAndAck())) staleReads++;
      if ((round + 1) % 250 === 0) progress(`stale check ${round + 1}/${plan.staleRounds}`);
    }

    const push: number[] = [];
    const detect: number[] = [];
    let pushLost = 0;
    for (let round = 0; round < plan.pushRounds; round++) {
      await notifications.quiet();
      const arrival = notifications.next(PUSH_LIMIT_MS);
      await edit();
      const written = performance.now();
      const writtenWall = Date.now();
      const at = await arrival;
      if (at === null) pushLost++;
      else push.push(at - written);
      await takeAndAck();
      detect.push(stampedAt(previous!) - writtenWall);
      if ((round + 1) % 50 === 0) progress(`push ${round + 1}/${plan.pushRounds}`);
    }
    return {
      staleReads,
      staleRounds: plan.staleRounds,
      push: summarize(push),
      pushLost,
      detect: summarize(detect),
    };
  } finally {
    await client?.close();
    await daemon?.stop();
  }
};
