/** pulse's own MCP tools, which always run: the agent needs them to check in and acknowledge. */
export const PULSE_TOOLS = ['pulse_should_interrupt', 'pulse_ack_replan', 'pulse_ack_events'] as const;
