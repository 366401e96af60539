import type { SystemStatus } from '../../src/system/system-status.js';

/** How often `waitForStatus` asks. */
const POLL_EVERY_MS = 100;

/** The daemon's `GET /status`, from the MCP endpoint URL it printed. */
export const readStatus = async (mcpUrl: string): Promise<SystemStatus> => {
  const response = await fetch(new URL('/status', mcpUrl));
  if (!response.ok) throw new Error(`GET /status answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as SystemStatus;
};

/**
 * Resolves with the first status that satisfies `ready`, asking every 100 ms: the daemon has
 * no event to wait on from outside. Rejects after `limitMs` with what the last status showed.
 */
export const waitForStatus = async (
  mcpUrl: string,
  ready: (status: SystemStatus) => boolean,
  { limitMs, what }: { limitMs: number; what: string },
): Promise<SystemStatus> => {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const status = await readStatus(mcpUrl);
    if (ready(status)) return status;
    if (performance.now() > deadline) {
      const pollers = status.sources.pollers;
      const errors = [...new Set(pollers.flatMap((p) => (p.last_error ? [p.last_error] : [])))];
      throw new Error(
        `The daemon at ${mcpUrl} did not reach "${what}" within ${limitMs} ms: ${pollers.length} pollers, ${
          pollers.filter((p) => p.polls > 0).length
        } polled; config error: ${status.sources.error ?? 'none'}; poll errors: ${errors.join(' | ') || 'none'}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_EVERY_MS));
  }
};
