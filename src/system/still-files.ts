import type { PulseActor } from '../../machines/pulse.js';
import type { TrackedFiles } from '../../machines/pulse-files.js';

/** The stat check each project's wiring gives its event log, kept by root actor for read-your-writes without a round trip. */
const checks = new WeakMap<PulseActor, (files: TrackedFiles) => boolean>();

/** Keeps the check whether the files are as the log last recorded them (`.pulse/` still a folder, each stat the same). */
export const keepStillFilesCheck = (actor: PulseActor, check: (files: TrackedFiles) => boolean): void => {
  checks.set(actor, check);
};

/** Whether the files are as `files` recorded them; false (so the log scans) for a system wired with no check. */
export const filesStill = (actor: PulseActor, files: TrackedFiles): boolean =>
  checks.get(actor)?.(files) ?? false;
