import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { EventLogContext } from '../../machines/event-log.js';
import type { ReplanContext } from '../../machines/replan.js';
import { logOf, reconcile, replanOf } from '../requests.js';
import type { PulseActor } from '../wiring.js';
import { jsonResult } from './json-result.js';

/** Past this many new events, `changed_files` keeps the most recent ones and says it was cut. */
export const CHANGED_FILES_LIMIT = 1000;

export const REASONS = {
  pending:
    'User guidance or constraints changed and have not been acknowledged. The agent should review PulseAgent context, update the plan, and call pulse_ack_replan before continuing.',
  newEvents:
    'PulseAgent saw new events, but there is no pending guidance or constraints change requiring replan.',
  quiet: 'No new PulseAgent events and no pending replan acknowledgement.',
} as const;

export const interruptOutput = {
  needs_replan: z.boolean(),
  latest_event_id: z.string().nullable(),
  has_new_events: z.boolean(),
  changed_files: z.array(z.string()),
  pending_replan_event_id: z.string().nullable(),
  pending_replan_files: z.array(z.string()),
  last_acknowledged_event_id: z.string().nullable(),
  last_acknowledged_plan_sha256: z.string().nullable(),
  reason: z.string(),
  last_seen_event_known: z
    .boolean()
    .describe(
      'False when last_seen_event_id was given but is not in the log; then every event counts as new.',
    ),
  new_event_count: z.number().int(),
  changed_files_truncated: z
    .boolean()
    .describe(
      `True when more than ${CHANGED_FILES_LIMIT} events are new; changed_files then holds the latest ones.`,
    ),
};

export type InterruptAnswer = { [K in keyof typeof interruptOutput]: z.infer<(typeof interruptOutput)[K]> };

/** PulseAgent's decision, read from the log owner's and the replan lifecycle's snapshots. */
export const interruptAnswer = (
  log: Pick<EventLogContext, 'index'>,
  replan: ReplanContext,
  lastSeenEventId: string | null,
): InterruptAnswer => {
  const { index } = log;
  const known = lastSeenEventId !== null && index.has(lastSeenEventId);
  const since = known ? lastSeenEventId : null;
  const newCount = index.countAfter(since);
  const needsReplan = replan.pendingEventId !== null;
  return {
    needs_replan: needsReplan,
    latest_event_id: index.latest?.id ?? null,
    has_new_events: newCount > 0,
    changed_files: index.lastAfter(since, CHANGED_FILES_LIMIT).map((event) => event.path),
    pending_replan_event_id: replan.pendingEventId,
    pending_replan_files: replan.pendingFiles,
    last_acknowledged_event_id: replan.lastAck?.eventId ?? null,
    last_acknowledged_plan_sha256: replan.lastAck?.planSha256 ?? null,
    reason: needsReplan ? REASONS.pending : newCount > 0 ? REASONS.newEvents : REASONS.quiet,
    last_seen_event_known: lastSeenEventId === null || known,
    new_event_count: newCount,
    changed_files_truncated: newCount > CHANGED_FILES_LIMIT,
  };
};

export const registerShouldInterrupt = (server: McpServer, actor: PulseActor): void => {
  server.registerTool(
    'pulse_should_interrupt',
    {
      description:
        'Check whether an IDE agent should pause and replan. Call it before continuing long-running work, with the latest_event_id you saw last.',
      inputSchema: { last_seen_event_id: z.string().nullable().optional() },
      outputSchema: interruptOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ last_seen_event_id }) => {
      await reconcile(actor);
      const answer = interruptAnswer(
        logOf(actor).getSnapshot().context,
        replanOf(actor).getSnapshot().context,
        last_seen_event_id ?? null,
      );
      return jsonResult(answer);
    },
  );
};
