import { errorMessage } from '../../machines/error-message.js';
import type { PolledSource, ToolSafety } from '../../machines/external.js';
import { type RawAnswer, type SourceTestResult, TESTED_ITEMS_SHOWN } from '../../machines/sources-context.js';
import { failedTest } from '../../machines/sources-decisions.js';
import { redactSecrets } from '../log/redact-secrets.js';
import type { ClientPool } from './client/client-pool.js';
import { checkTool } from './client/tool-safety.js';
import { extractItems, type ItemReading } from './items/extract.js';
import { keysFound } from './items/result-keys.js';

/** How much of a tool's answer `--raw` shows: enough to write a `map`, not a whole mailbox. */
export const RAW_CHARS = 20_000;

/** A test connects, then calls, each within its server's timeout; past this the daemon answers that it did not end. */
export const MAX_SOURCE_TEST_MS = 10 * 60_000;

const rawAnswer = (result: unknown, secrets: readonly string[]): RawAnswer => {
  const text = redactSecrets(JSON.stringify(result, null, 2) ?? String(result), secrets);
  const end = /[\uD800-\uDBFF]/.test(text.charAt(RAW_CHARS - 1)) ? RAW_CHARS - 1 : RAW_CHARS;
  return {
    text: text.length > RAW_CHARS ? text.slice(0, end) : text,
    cut: Math.max(0, text.length - end),
    keys: keysFound(result),
  };
};

/**
 * Calls a source's tool once through `pool` and reads its items as its poller would, marking
 * nothing seen; a tool that says it writes or destroys is not called, as its poller would not. Never throws: a failed call or an answer without items is a result with the
 * error (its server named, secrets redacted); with `raw`, what the tool answered comes too.
 */
export const runSourceTest = async (
  pool: ClientPool,
  source: PolledSource,
  { raw, secrets, reading }: { raw: boolean; secrets: readonly string[]; reading: ItemReading },
): Promise<SourceTestResult> => {
  let result: unknown;
  let tool: ToolSafety | null = null;
  try {
    tool = await checkTool(pool, source);
    // A test calls the tool as its poller would: not at all when it says it writes or destroys.
    if (tool.verdict === 'refused') return failedTest(source.name, source.server, tool.message!, tool);
    result = await pool.callTool(source.server, source.tool, source.args);
  } catch (error) {
    return failedTest(source.name, source.server, redactSecrets(errorMessage(error), secrets), tool);
  }
  const answer = raw ? rawAnswer(result, secrets) : null;
  try {
    const items = extractItems(result, reading);
    return {
      source: source.name,
      server: source.server,
      ok: true,
      error: null,
      items: items.slice(0, TESTED_ITEMS_SHOWN).map((item) => ({
        item_id: item.itemId,
        title: item.title,
        starts_at: item.startsAt,
      })),
      item_count: items.length,
      raw: answer,
      tool,
    };
  } catch (error) {
    const text = `server "${source.server}", tool "${source.tool}": ${redactSecrets(errorMessage(error), secrets)}`;
    return { ...failedTest(source.name, source.server, text, tool), raw: answer };
  }
};
