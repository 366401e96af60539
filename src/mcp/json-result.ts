/** A tool result as PulseAgent clients read it (JSON text) and as typed clients do (structuredContent). */
export const jsonResult = <T extends object>(value: T) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
});
