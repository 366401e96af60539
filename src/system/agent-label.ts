/**
 * An agent as people know it, from its parties: its hook sessions, then its MCP sessions (the
 * first 8 characters) and names, e.g. `hook session claude:4f1c… + MCP session 9a2b3c4d`.
 */
export const agentLabel = (parties: readonly string[]): string => {
  const after = (prefix: string) =>
    parties.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
  const words = [
    ...after('hook:').map((hook) => `hook session ${hook}`),
    ...after('session:').map((session) => `MCP session ${session.slice(0, 8)}`),
    ...after('agent:').map((name) => `agent ${name}`),
    ...parties.filter((p) => p === 'one-shot').map(() => 'a one-shot caller'),
  ];
  return words.join(' + ') || 'an unknown agent';
};
