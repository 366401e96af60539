import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AGENT_RULE_LINES } from '../../src/mcp/agent-rule.js';

const doc = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('the agent rule', () => {
  it('is the text the connect guide and the agent setup guide show, line for line', async () => {
    const block = `\`\`\`text\n${AGENT_RULE_LINES.join('\n')}\n\`\`\``;
    expect(await doc('docs/connect-agents.md')).toContain(block);
    expect(await doc('docs/agent-setup.md')).toContain(block);
  });
});
