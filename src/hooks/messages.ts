import type { FileFault } from '../../machines/log-faults.js';
import { EXTERNAL_FRAMING } from '../mcp/external-section.js';
import { faultSentence } from '../system/blind-reason.js';
import type { ToolCall } from './dialect.js';

// What the hooks say to the agent (and once to the user). One sentence of steps, so the agent
// reads the same instructions whichever hook stopped it.

/** The replan the hooks enforce: the latest pending event and the files it changed. */
export interface Pending {
  event_id: string;
  files: string[];
  /** The hook session as the ack names it (`claude:<session>`), so the ack frees this agent whatever its MCP session. */
  agent?: string;
}

/** A delivery of external events, as the hooks announce it: its id and one line per event. */
export interface Attention {
  delivery_id: string;
  headlines: string[];
}

const situation = ({ event_id, files }: Pending) =>
  `pulse: a replan is pending (event ${event_id}; the user changed ${files.join(', ') || 'the guidance'}).`;

const steps = ({ event_id, files, agent }: Pending) =>
  `Read pulse://context/latest (or the files ${[...new Set([...files, '.pulse/task.md'])].join(', ')}), ` +
  `update .pulse/plan.md to follow it, then call pulse_ack_replan with event_id "${event_id}"${agent === undefined ? '' : ` and agent "${agent}"`}.`;

const what = (tool: ToolCall, shellWhy: string | undefined) =>
  tool.command === undefined
    ? `the tool ${tool.name}`
    : `this shell command${shellWhy === undefined ? '' : ` (${shellWhy})`}`;

const ALLOWED =
  'Until then only reading, planning, editing .pulse/plan.md, shell commands that only read, and the pulse_* tools run.';

/** Why a tool call is held (for a shell command, what in it is more than reading), and exactly how to release it. */
export const heldReason = (pending: Pending, tool: ToolCall, shellWhy?: string): string =>
  `${situation(pending)} pulse held ${what(tool, shellWhy)} until you replan: ${steps(pending)} ${ALLOWED}`;

/** Why a tool call is held when its hook input is over the body limit, unread, while a replan (`eventId`, when one) is pending or pulse is blind. */
export const unreadHeldReason = (maxBytes: number, eventId: string | null): string =>
  `pulse: ${eventId === null ? 'the plan is on hold' : `a replan is pending (event ${eventId})`}, and this tool call's hook input is over ${maxBytes} bytes, more than pulse reads, so pulse held it unread. Call pulse_should_interrupt and do as it says, then make the call again, in smaller parts if it is still this long. ${ALLOWED}`;

const blindSituation = (blind: readonly FileFault[]) =>
  `pulse: the plan is on hold because pulse cannot see or record changes to the guidance or constraints: ${blind.map(faultSentence).join(' ')}`;

const blindSteps = (pending: Pending | null) =>
  `Tell the user exactly what to fix (above); pulse sees it fixed by itself.${pending === null ? '' : ` The replan stays to do: ${steps(pending)}`}`;

/** Why a tool call is held while pulse cannot see guidance or constraints changes (fail closed), and what the user must fix. */
export const blindHeldReason = (
  blind: readonly FileFault[],
  pending: Pending | null,
  tool: ToolCall,
  shellWhy?: string,
): string =>
  `${blindSituation(blind)} pulse held ${what(tool, shellWhy)} until it is fixed. ${blindSteps(pending)} ${ALLOWED}`;

/** Why the agent may not stop yet while pulse cannot see guidance or constraints changes. */
export const blindStopReason = (blind: readonly FileFault[], pending: Pending | null): string =>
  `${blindSituation(blind)} Do not stop yet: ${blindSteps(pending)} Then stop.`;

/** The blind spot as context, where the hook cannot block (session start, a new prompt). */
export const blindNotice = (blind: readonly FileFault[], pending: Pending | null): string =>
  `${blindSituation(blind)} Before any other work: ${blindSteps(pending)}`;

/** To the user, when the agent stops a second time with pulse still unable to see the files. */
export const stillBlindNotice = (blind: readonly FileFault[]): string =>
  `pulse: guidance and constraints changes are not enforced until this is fixed: ${blind.map(faultSentence).join(' ')}`;

/** Why the agent may not stop yet. */
export const stopReason = (pending: Pending): string =>
  `${situation(pending)} Do not stop yet: ${steps(pending)} Then continue, or stop.`;

/** The pending replan as context, where the hook cannot block (session start, a new prompt). */
export const pendingNotice = (pending: Pending): string =>
  `${situation(pending)} Before any other work: ${steps(pending)}`;

/** To the user, when the agent stops a second time with the replan still pending. */
export const stillPendingNotice = ({ event_id }: Pending): string =>
  `pulse: replan ${event_id} is still pending: the agent stopped without acknowledging it.`;

/** The delivery's titles, one a line, framed as facts, with what to do about them. */
export const attentionNotice = ({ headlines }: Attention): string =>
  [
    `pulse: external events need attention. ${EXTERNAL_FRAMING}`,
    ...headlines.map((line) => `- ${line}`),
    'Call pulse_should_interrupt to receive them, tell the user what matters, then call pulse_ack_events with its delivery_id.',
  ].join('\n');
