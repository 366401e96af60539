import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { waitFor } from 'xstate';
import { createHttpApp } from './http/app.js';
import { logOf } from './requests.js';
import { removeDiscovery, writeDiscovery } from './store/discovery-file.js';
import { type PulsePaths, pulsePaths } from './store/paths.js';
import { ensurePulseFolder } from './store/pulse-folder.js';
import { VERSION } from './version.js';
import { createPulseSystem } from './wiring.js';

export interface DaemonOptions {
  project: string;
  host?: string;
  port?: number;
  /** Stream the actor system to the Stately inspector through a local relay. */
  inspect?: boolean;
  /** The relay's port (0 picks a free one). */
  inspectPort?: number;
}

/** The port is taken; the message names it and says how to pick another. */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
}

export interface Daemon {
  paths: PulsePaths;
  url: string;
  host: string;
  port: number;
  /** The inspector's relay page, when started with `inspect`. */
  inspectUrl: string | null;
  /** Files created on this start (templates, log, state). */
  created: string[];
  /** Repairs and recoveries made while loading. */
  warnings: string[];
  close(): Promise<void>;
}

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

const listen = (fetch: Parameters<typeof serve>[0]['fetch'], host: string, port: number) =>
  new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const server = serve({ fetch, hostname: host, port }, () => resolve(server));
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(
          new PortInUseError(
            `Port ${port} on ${host} is already in use (another pulse? run \`pulse status\`). Pick another with --port ${port + 1}, or --port 0 for any free port.`,
          ),
        );
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(new Error(`Cannot listen on ${host}: no such local address. Use --host 127.0.0.1.`));
      } else {
        reject(error);
      }
    });
  });

/**
 * Starts the sidecar on a project: `.pulse/` initialised, the actor system running, MCP
 * served over HTTP, a discovery file written. `close()` undoes it all in order.
 */
export const startDaemon = async ({
  project,
  host = '127.0.0.1',
  port = 8765,
  inspect = false,
  inspectPort = 5678,
}: DaemonOptions): Promise<Daemon> => {
  const paths = pulsePaths(project);
  const created = await ensurePulseFolder(paths);
  // The relay comes first, so a taken --inspect-port fails before anything starts, and the
  // inspector is there for the system's first events. Loaded only then: off, it costs nothing.
  // The sources' secrets, redacted from what the inspector sends, come from the system once it exists.
  let secrets: () => readonly string[] = () => [];
  const inspecting = inspect
    ? await import('./inspect/inspector.js').then(({ startInspecting }) =>
        startInspecting({ port: inspectPort, secrets: () => secrets() }),
      )
    : null;
  const system = await createPulseSystem(paths, inspecting ? { inspect: inspecting.inspect } : {}).catch(
    async (error) => {
      await inspecting?.close();
      throw error;
    },
  );
  secrets = system.secrets;
  system.actor.start();
  const loaded = await waitFor(logOf(system.actor), (s) => !s.matches('loading'));
  if (loaded.matches('failed')) {
    await system.stop();
    await inspecting?.close();
    throw new Error(loaded.context.lastError ?? 'The event log could not be loaded.');
  }
  const { app, closeSessions } = createHttpApp({ actor: system.actor, projectRoot: paths.projectRoot });
  let server: ReturnType<typeof serve>;
  try {
    server = await listen(app.fetch, host, port);
  } catch (error) {
    await system.stop();
    await inspecting?.close();
    throw error;
  }
  const boundPort = (server.address() as AddressInfo).port;
  const url = `http://${urlHost(host)}:${boundPort}/mcp`;
  await writeDiscovery(paths.dir, {
    pid: process.pid,
    host,
    port: boundPort,
    url,
    version: VERSION,
    started_at: new Date().toISOString(),
    ...(inspecting ? { inspect_url: inspecting.url } : {}),
  });
  let closing: Promise<void> | null = null;
  return {
    paths,
    url,
    host,
    port: boundPort,
    inspectUrl: inspecting?.url ?? null,
    created,
    warnings: loaded.context.warnings,
    close() {
      closing ??= (async () => {
        // HTTP first (no new requests), then MCP sessions, then the actors, then the inspector
        // (it saw them stop); each step runs even if one throws.
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        if ('closeAllConnections' in server) server.closeAllConnections();
        await Promise.allSettled([stopped, closeSessions()]);
        await Promise.allSettled([system.stop(), removeDiscovery(paths.dir)]);
        await inspecting?.close().catch(() => undefined);
      })();
      return closing;
    },
  };
};
