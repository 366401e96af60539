/**
 * The hook events pulse answers, per agent, in each agent's own spelling. `pulse setup` registers
 * exactly these (as `pulse hook <agent> --event <name>`), and `pulse hook` understands each of them.
 */
export const HOOK_EVENTS = {
  claude: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'],
  codex: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'],
  cursor: ['beforeSubmitPrompt', 'beforeShellExecution', 'beforeMCPExecution', 'stop'],
} as const;

export type HookAgent = keyof typeof HOOK_EVENTS;

export type HookEventName<A extends HookAgent = HookAgent> = (typeof HOOK_EVENTS)[A][number];

export const isHookAgent = (value: string): value is HookAgent => Object.hasOwn(HOOK_EVENTS, value);

/** The session `pulse doctor` probes the hook route with: answered, never an agent working in the project. */
export const PROBE_SESSION = 'pulse-doctor';
