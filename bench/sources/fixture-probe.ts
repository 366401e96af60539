import { connectSession } from '../lib/session.js';

/** A client timing calls to the fixture at a low rate while the daemon polls it. */
export interface FixtureProbe {
  /** Stops calling; resolves with each call's round trip in ms. */
  stop(): Promise<number[]>;
}

/**
 * Calls `tool` on the MCP server at `url` with `args` once every `everyMs` (never two at once)
 * and times each round trip: how long the server takes to answer under the daemon's load,
 * which the daemon's schedule drift includes.
 */
export const startFixtureProbe = async (
  url: string,
  { tool, args, everyMs }: { tool: string; args: Record<string, unknown>; everyMs: number },
): Promise<FixtureProbe> => {
  const client = await connectSession(url);
  const samples: number[] = [];
  let stopped = false;
  let wake = () => {};
  let failure: unknown = null;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      const result = await client.callTool({ name: tool, arguments: args });
      samples.push(performance.now() - started);
      if (result.isError) throw new Error(`probe call failed: ${JSON.stringify(result.content)}`);
      const rest = Math.max(0, everyMs - (performance.now() - started));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, rest);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })().catch((error: unknown) => {
    failure = error;
  });
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
      await client.close();
      if (failure !== null) throw failure;
      return samples;
    },
  };
};
