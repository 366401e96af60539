/**
 * What pulse's tools do, as MCP annotations: none destroys anything, none reaches past pulse
 * (`openWorldHint: false`), and none only reads (a check-in logs changes and may claim a
 * delivery). Codex reads a tool without `destructiveHint: false` as destructive and asks before
 * each call; with both hints false it runs them unasked, as the agent must while a replan holds
 * everything else.
 */
export const TOOL_ANNOTATIONS = { destructiveHint: false, openWorldHint: false } as const;

/** An ack: acknowledging the same thing again changes nothing more. */
export const ACK_ANNOTATIONS = { ...TOOL_ANNOTATIONS, idempotentHint: true } as const;
