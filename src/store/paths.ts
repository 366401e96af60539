import { join, resolve } from 'node:path';
import { PULSE_FILES, type PulseFileName } from '../../machines/pulse-files.js';

/** Where everything of one project lives. */
export interface PulsePaths {
  projectRoot: string;
  dir: string;
  state: string;
  events: string;
  inbox: string;
  deadLetters: string;
  /** The user's `sources.json`: servers, sources and the reflection settings. */
  sources: string;
  /** `external_seen.jsonl`: the items already listed, so they never enter the inbox twice. */
  seen: string;
  file(name: PulseFileName): string;
}

export const pulsePaths = (project: string): PulsePaths => {
  const projectRoot = resolve(project);
  const dir = join(projectRoot, '.pulse');
  // Joined once: every tool call stats the four files.
  const files = Object.fromEntries(PULSE_FILES.map((name) => [name, join(dir, name)])) as Record<
    PulseFileName,
    string
  >;
  return {
    projectRoot,
    dir,
    state: join(dir, 'state.json'),
    events: join(dir, 'events.jsonl'),
    inbox: join(dir, 'inbox.jsonl'),
    deadLetters: join(dir, 'dead-letters.jsonl'),
    sources: join(dir, 'sources.json'),
    seen: join(dir, 'external_seen.jsonl'),
    file: (name) => files[name] ?? join(dir, name),
  };
};
