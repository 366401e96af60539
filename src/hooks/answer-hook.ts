import { hookParty, ONE_SHOT } from '../../machines/agent-identity.js';
import { echoesUseId } from '../../machines/agent-products.js';
import { memoryOf } from '../../machines/hook-sessions-context.js';
import type { PulseActor } from '../../machines/pulse.js';
import { owedBy } from '../../machines/replan-decisions.js';
import { headline } from '../mcp/external-section.js';
import {
  gateOf,
  type HookSessionsRef,
  hearAgent,
  hooksOf,
  reconcile,
  replanOf,
  tieAgents,
} from '../system/ask-actors.js';
import { decide } from './decide.js';
import type { ToolCall } from './dialect.js';
import { PROBE_SESSION } from './events.js';
import type { HookCall } from './hook-input.js';
import { formatVerdict } from './hook-output.js';
import { PULSE_TOOLS } from './pulse-tools.js';
import { isPulseTool, judgeTool } from './tool-rule.js';

/**
 * A hook answers within its agent's tool call: it waits this long, at most, for a scan of files
 * that changed (still files answer at once); past it, the call is held rather than judged on an
 * older reading (fail closed). Longer than an editor's replace window (500 ms), so a save seen half
 * done is waited for, and well inside every hook's own limit (8 s), because a held call costs the
 * agent a model turn while a wait costs only the scan's time.
 */
const RECONCILE_BUDGET_MS = 2000;

/** What a hook holds for when the scan it waited for did not end in time. */
const STILL_READING = {
  file: '.pulse/',
  reason: `could not be read in time (the scan took longer than ${RECONCILE_BUDGET_MS / 1000} s: a busy machine, a slow disk, or a log that failed to load, see pulse status): call pulse_should_interrupt, then try again`,
};

/** Read-your-writes for hooks, bounded: a guidance edit saved just before this tool call is seen; false when the scan did not end in time. */
export const reconcileWithin = async (actor: PulseActor, ms = RECONCILE_BUDGET_MS): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([
    reconcile(actor).then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return done;
};

/**
 * Keeps which of pulse's tools a session is calling, from its pre-tool hook to its post-tool hook:
 * the MCP request in between is that session's, even from a 2026-07-28 client that passed no handle.
 */
const trackPulseCall = (hooks: HookSessionsRef, call: HookCall, used: ToolCall, party: string): void => {
  const tool = PULSE_TOOLS.find((name) => used.name.endsWith(name));
  if (tool === undefined) return;
  if (call.phase === 'pre-tool')
    hooks.send({
      type: 'hook.pulseCallStarted',
      call: {
        party,
        host: call.agent,
        tool,
        useId: echoesUseId(call.agent) ? (used.useId ?? null) : null,
        at: Date.now(),
      },
    });
  else if (call.phase === 'post-tool') hooks.send({ type: 'hook.pulseCallEnded', party, tool });
};

/**
 * Answers one agent hook, its input already read, in the agent's own format: holds a tool call or
 * a stop while a replan is pending, tells each session of the replan and of a delivery once.
 * `server` is the name the agent gives pulse's MCP server (`?server=`).
 */
export const answerHook = async (
  actor: PulseActor,
  projectRoot: string,
  call: HookCall,
  server = 'pulse',
): Promise<string> => {
  const read = await reconcileWithin(actor, RECONCILE_BUDGET_MS);
  // VS Code runs other agents' hook files: the session and the tool names are the caller's.
  const caller = call.agent;
  const session = `${caller}:${call.session}`;
  const party = hookParty(caller, call.session);
  if (call.session !== PROBE_SESSION) hearAgent(actor, party);
  const pulseTool = call.tool !== null && isPulseTool(caller, call.tool.name, server);
  // pulse's own answer, seen in this session's hook input, names the MCP caller: one agent.
  // Never to the one-shot identity (a refused or nameless call's): every nameless caller shares it, so it names no one agent.
  const answered = call.answeredAgentId;
  if (pulseTool && answered !== null && answered !== party && answered !== ONE_SHOT)
    tieAgents(actor, party, answered, 'tool-output');
  const hooks = hooksOf(actor);
  if (pulseTool && call.tool !== null && call.session !== PROBE_SESSION)
    trackPulseCall(hooks, call, call.tool, party);
  const replan = replanOf(actor).getSnapshot().context;
  const out = gateOf(actor).getSnapshot().context.delivery;
  const owed = owedBy(replan, party);
  const pending =
    owed === null ? null : { event_id: owed.pendingEventId!, files: owed.pendingFiles, agent: session };
  // Only a hold (a pending replan, or guidance pulse cannot see) needs the whole judgement (a shell line parsed, paths resolved).
  const tool =
    call.tool === null
      ? { pulseTool: false, allowed: true }
      : pending === null && replan.blind.length === 0 && read
        ? { pulseTool, allowed: true }
        : await judgeTool(caller, call.tool, { projectRoot, cwd: call.cwd, server });
  const { verdict, remember } = decide(call, {
    pending,
    blind: replan.blind,
    late: read ? undefined : STILL_READING,
    // An agent that owes its replan ack takes no delivery yet, so it is not told of one.
    delivery:
      out === null || owed !== null
        ? null
        : { delivery_id: out.deliveryId, headlines: out.events.map(headline) },
    memory: memoryOf(hooks.getSnapshot().context, session),
    pulseTool: tool.pulseTool,
    toolAllowed: tool.allowed,
    toolWhy: tool.why,
  });
  if (Object.keys(remember).length > 0) hooks.send({ type: 'hook.remember', session, memory: remember });
  return formatVerdict(call, verdict);
};
