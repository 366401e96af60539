// pulse's plugin for opencode, which has no command hooks. `pulse setup opencode` writes it,
// compiled by scripts/build-opencode-plugin.mjs, into the project's .opencode/plugins/pulse.js
// below one line of its own, `const PULSE = {…}`: the only values that differ between projects.
// opencode runs it under Bun and awaits its hooks; it imports nothing, so it runs whether or not
// opencode's own npm install of @opencode-ai/plugin succeeded.

/** What `pulse setup opencode` writes above the plugin. */
interface PulseSetup {
  /** The port `pulse start` serves on. */
  port: number;
  /** The project the hooks were set up for (`?project=`): a daemon serving another one does not answer for it. */
  project: string;
  /** The name of pulse's MCP server in opencode.json. */
  server: string;
  /** How the user runs pulse, for the line that says how to start the daemon. */
  pulse: string;
}

declare const PULSE: PulseSetup;
declare const process: { env: Record<string, string | undefined> };

/** pulse's verdict: hold the tool call or the stop with this reason, tell the model this, tell the user this. */
interface Verdict {
  hold?: string;
  context?: string;
  notice?: string;
}

/** What the plugin uses of the client opencode gives it (the SDK of its own server). */
interface Client {
  session: {
    prompt(options: {
      path: { id: string };
      body: { parts: Array<{ type: 'text'; text: string }> };
    }): Promise<unknown>;
  };
  tui: {
    showToast(options: { body: { title: string; message: string; variant: 'warning' } }): Promise<unknown>;
  };
  app: { log(options: { body: { service: string; level: 'warn'; message: string } }): Promise<unknown> };
}

/** A part of a message, as the plugin reads and adds them. */
type Part = { id: string } & Record<string, unknown>;

/** A bus event, as opencode hands each one to `event` (without awaiting it). */
interface BusEvent {
  type: string;
  properties: Record<string, unknown> & { info?: Record<string, unknown> };
}

/**
 * Past this the daemon counts as down and opencode goes on, as with the other agents' hooks
 * (`ASK_TIMEOUT_MS`): no hook of opencode's has a timeout of its own, and a daemon that is not
 * running is known at once (connection refused); only a hung one costs this wait.
 */
const TIMEOUT_MS = 8000;

/** Why the daemon gave no verdict, as the curl hooks of the other agents say it. */
const failure = (error: unknown): string => {
  const { name, code, cause } = (error ?? {}) as { name?: string; code?: string; cause?: { code?: string } };
  if (name === 'TimeoutError') return `did not answer within ${TIMEOUT_MS / 1000} s`;
  // Bun's fetch says ConnectionRefused; Node's, ECONNREFUSED in its cause.
  if (code === 'ConnectionRefused' || cause?.code === 'ECONNREFUSED') return 'is not running';
  return `could not be asked (${error instanceof Error ? error.message : String(error)})`;
};

/** Runs a call to opencode's client for its side effect; whatever becomes of it changes nothing here. */
const quietly = (call: () => Promise<unknown>): void => {
  try {
    call().catch(() => {});
  } catch {}
};

export const PulsePlugin = async ({ client, directory }: { client: Client; directory: string }) => {
  let told: string | null = null;
  /** Tells the user a line once (again only after an answer without it): a toast in the TUI, opencode's log, and stderr where opencode runs on the main thread (`opencode run`, `serve`). */
  const say = (line: string) => {
    if (line === told) return;
    told = line;
    quietly(() => client.tui.showToast({ body: { title: 'pulse', message: line, variant: 'warning' } }));
    quietly(() => client.app.log({ body: { service: 'pulse', level: 'warn', message: line } }));
    // The TUI runs opencode's server, and so this plugin, in a worker: stderr there would write over the screen.
    if ((globalThis as { Bun?: { isMainThread: boolean } }).Bun?.isMainThread) console.error(line);
  };

  /** Posts one hook to the daemon and returns its verdict; when none comes, fails open: an empty verdict, and one line for the user. */
  const ask = async (event: string, body: Record<string, unknown>): Promise<Verdict> => {
    const url = new URL(`http://127.0.0.1:${PULSE.port}/hook/opencode/${event}`);
    url.searchParams.set('project', PULSE.project);
    if (PULSE.server !== 'pulse') url.searchParams.set('server', PULSE.server);
    const token = process.env.PULSE_TOKEN;
    let why: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify({ directory, ...body }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.ok) {
        const verdict = JSON.parse(text) as Verdict;
        if (verdict.notice === undefined) told = null;
        else say(verdict.notice);
        return verdict;
      }
      why =
        response.status === 401
          ? 'refused the hook (is PULSE_TOKEN set?)'
          : `answered ${response.status} (${text.slice(0, 200)})`;
    } catch (error) {
      why = failure(error);
    }
    say(
      `pulse: the daemon ${why} at 127.0.0.1:${PULSE.port} for ${PULSE.project}; not enforcing replans. Start it with: ${PULSE.pulse} start -p ${PULSE.project} --port ${PULSE.port}`,
    );
    return {};
  };

  /** Subagent sessions (a `task`'s), whose end is not the agent's stop; sessions the user interrupted. */
  const children = new Set<string>();
  const interrupted = new Set<string>();

  return {
    // The user's message: pulse's context goes in as a part of it, which the model reads once and keeps.
    'chat.message': async (
      input: { sessionID: string },
      output: { message: { id: string }; parts: Part[] },
    ) => {
      const { context } = await ask('chat.message', { input });
      const last = output.parts.at(-1);
      if (context === undefined || last === undefined) return;
      // Part ids sort by time; one longer than the last part's sorts right after it.
      output.parts.push({
        id: `${last.id}0`,
        sessionID: input.sessionID,
        messageID: output.message.id,
        type: 'text',
        text: context,
        synthetic: true,
      });
    },
    // A throw fails the call: the tool does not run, and the model reads the reason as its result.
    'tool.execute.before': async (
      input: { tool: string; sessionID: string; callID: string },
      output: { args: unknown },
    ) => {
      const { hold } = await ask('tool.execute.before', { input, output });
      if (hold !== undefined) throw new Error(hold);
    },
    // pulse's own tools answer with the MCP session's agent_id: their result ties the two sessions.
    'tool.execute.after': async (
      input: { tool: string; sessionID: string; callID: string; args: unknown },
      output: { output?: unknown; content?: unknown },
    ) => {
      const own = [`${PULSE.server}_`, `mcp__${PULSE.server}__`].some((prefix) =>
        input.tool.startsWith(prefix),
      );
      const { context } = await ask('tool.execute.after', { input, ...(own ? { output } : {}) });
      if (context === undefined) return;
      if (typeof output.output === 'string') output.output += `\n\n${context}`;
      else if (Array.isArray(output.content)) output.content.push({ type: 'text', text: context });
    },
    // The stop: sent back as the user's next message, which the TUI and `opencode serve` answer; `opencode run` has exited by then.
    event: async ({ event }: { event: BusEvent }) => {
      const info = event.properties.info ?? {};
      if (event.type === 'session.created' && typeof info.parentID === 'string')
        children.add(String(info.id));
      if (event.type === 'message.updated' && info.role === 'assistant') {
        const aborted = (info.error as { name?: string } | undefined)?.name === 'MessageAbortedError';
        if (aborted) interrupted.add(String(info.sessionID));
        else interrupted.delete(String(info.sessionID));
      }
      const sessionID = event.properties.sessionID;
      if (event.type !== 'session.idle' || typeof sessionID !== 'string') return;
      if (children.has(sessionID) || interrupted.has(sessionID)) return;
      const { hold } = await ask('session.idle', { input: { sessionID } });
      if (hold === undefined) return;
      quietly(() =>
        client.session.prompt({ path: { id: sessionID }, body: { parts: [{ type: 'text', text: hold }] } }),
      );
    },
  };
};
