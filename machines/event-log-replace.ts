import type { PulseFileName } from './pulse-files.js';

/**
 * One file's replace window: `here` ⇄ `away`, and `confirming` once the window ran out, until a
 * scan resolves it. A watcher notice for the file while it is away starts the window again: the
 * name is in use (an editor renaming its new file in), though no scan has caught it there yet.
 */
export const replaceRegion = (name: PulseFileName) => ({
  initial: 'here' as const,
  states: {
    here: {
      description: 'The file is where the log last saw it, or its absence is logged.',
      always: { guard: { type: 'isAway' as const, params: { name } }, target: 'away' as const },
    },
    away: {
      description:
        'The last scan found the file missing: no event yet, callers wait and guidance or constraints count as unseen; a scan that finds it back resolves it, a notice for it starts the window again.',
      always: { guard: { type: 'isResolved' as const, params: { name } }, target: 'here' as const },
      on: {
        'file.changed': {
          guard: { type: 'isNoticeFor' as const, params: { name } },
          target: 'away' as const,
          reenter: true,
        },
      },
      after: {
        replaceWindow: {
          target: 'confirming' as const,
          actions: [{ type: 'markGone' as const, params: { name } }, 'lookAgain' as const],
        },
      },
    },
    confirming: {
      description: 'The window ran out: the next scan logs the deletion if the file is still missing.',
      always: { guard: { type: 'isResolved' as const, params: { name } }, target: 'here' as const },
      on: {
        'file.changed': {
          guard: { type: 'isNoticeFor' as const, params: { name } },
          target: 'away' as const,
          actions: { type: 'unmarkGone' as const, params: { name } },
        },
      },
    },
  },
});
