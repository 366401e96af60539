import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** How hooks and `pulse status` find the daemon that serves a project. */
export interface Discovery {
  pid: number;
  host: string;
  port: number;
  url: string;
  version: string;
  started_at: string;
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

export const readDiscovery = async (pulseDir: string): Promise<Discovery | null> => {
  try {
    return JSON.parse(await readFile(discoveryPath(pulseDir), 'utf8')) as Discovery;
  } catch {
    return null;
  }
};

/** Removes the file only if it still names this process (a newer daemon may own it). */
export const removeDiscovery = async (pulseDir: string, pid = process.pid) => {
  const current = await readDiscovery(pulseDir);
  if (current?.pid === pid) await rm(discoveryPath(pulseDir), { force: true });
};
