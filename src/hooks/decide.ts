import type { HookAnswer } from './hook-answer.js';
import type { HookCall } from './hook-input.js';
import { attentionNotice, heldReason, pendingNotice, stillPendingNotice, stopReason } from './messages.js';
import { allowedWhilePending } from './tool-rule.js';

/**
 * What a hook does, before it is put in the agent's format: hold the tool call or the stop (with
 * the reason the agent reads), pass context to the agent, or tell the user something. Empty: let it be.
 */
export interface Verdict {
  hold?: string;
  context?: string;
  notice?: string;
}

const joined = (...parts: Array<string | null>): string | undefined => {
  const text = parts.filter((part) => part !== null).join('\n\n');
  return text === '' ? undefined : text;
};

/**
 * The decision for one hook call. A pending replan holds every tool call the agent does not need
 * to replan, and holds a stop once: a stop hook that already sent the agent back (Claude's
 * `stop_hook_active`, Cursor's `loop_count`) lets it stop, so it can never loop, and tells the user.
 */
export const decide = async (call: HookCall, answer: HookAnswer): Promise<Verdict> => {
  const { pending } = answer;
  const attention = answer.attention === null ? null : attentionNotice(answer.attention);
  switch (call.phase) {
    case 'pre-tool':
      return pending !== null && !(await allowedWhilePending(call.tool!, answer.project, call.cwd))
        ? { hold: heldReason(pending, call.tool!) }
        : {};
    case 'stop':
      if (pending !== null && call.stopRepeated) return { notice: stillPendingNotice(pending) };
      return { hold: joined(pending === null ? null : stopReason(pending), attention) };
    case 'post-tool':
      // The next tool call is held anyway; saying it after every read would only repeat it.
      return { context: joined(attention) };
    default:
      return { context: joined(pending === null ? null : pendingNotice(pending), attention) };
  }
};
