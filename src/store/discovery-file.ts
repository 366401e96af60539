import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** How hooks and `pulse status` find the daemon that serves a project. */
export interface Discovery {
  pid: number;
  host: string;
  port: number;
  url: string;
  version: string;
  started_at: string;
  /** The project's id on the daemon (its URLs are under `/p/<id>/`); absent from a daemon serving one project only. */
  project_id?: string;
  /** The Stately inspector's relay page, when the daemon runs with `--inspect`. */
  inspect_url?: string;
  /** Every request needs `Authorization: Bearer $PULSE_TOKEN` (the token is never written here). */
  token_required?: boolean;
}

export const discoveryPath = (pulseDir: string) => join(pulseDir, 'daemon.json');

// Loaded when written: `pulse hook` reads this file on every tool call and must not pay for it.
export const writeDiscovery = async (pulseDir: string, discovery: Discovery) => {
  const { replaceFile } = await import('./replace-file.js');
  await replaceFile(discoveryPath(pulseDir), `${JSON.stringify(discovery, null, 2)}\n`);
};

// Read synchronously: the first asynchronous file read starts libuv's thread pool, a few
// milliseconds that `pulse hook` would otherwise pay on every tool call for a file this small.
export const readDiscovery = (pulseDir: string): Discovery | null => {
  try {
    return JSON.parse(readFileSync(discoveryPath(pulseDir), 'utf8')) as Discovery;
  } catch {
    return null;
  }
};

/** Removes the file only if it still names this process (a newer daemon may own it). */
export const removeDiscovery = async (pulseDir: string, pid = process.pid) => {
  const current = readDiscovery(pulseDir);
  if (current?.pid === pid) rmSync(discoveryPath(pulseDir), { force: true });
};
