import { createAskingThinker } from './model-thinker.js';
import type { Sampler } from './sampling-clients.js';
import type { Thinker } from './thinker.js';

/** Room for the judgements of a run of events, with a reason each. */
const MAX_TOKENS = 4_000;

type Block = { type?: string; text?: string };

/** The text of a sampling result, whether its content is one block or several. */
const textOf = (content: Block | Block[] | undefined): string =>
  (Array.isArray(content) ? content : [content])
    .map((block) => (block?.type === 'text' && typeof block.text === 'string' ? block.text : ''))
    .join('');

/**
 * The thinker of `"thinker": "sampling"`: asks the connected agent's own model through MCP
 * sampling (`sampling/createMessage`), with the same prompt as the model thinker and no
 * context of the agent's conversation. The client may show the request to its user first;
 * `timeoutMs` bounds the wait.
 */
export const createSamplingThinker = (
  sampler: Sampler,
  { timeoutMs, maxEvents }: { timeoutMs: number; maxEvents: number },
): Thinker =>
  createAskingThinker(async (prompt) => {
    const result = await sampler.createMessage(
      {
        systemPrompt: prompt.system,
        messages: [{ role: 'user', content: { type: 'text', text: prompt.user } }],
        maxTokens: MAX_TOKENS,
        temperature: 0,
        includeContext: 'none',
      },
      { timeout: timeoutMs },
    );
    return textOf(result.content as Block | Block[]);
  }, maxEvents);
