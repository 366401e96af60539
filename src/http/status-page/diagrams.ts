import type { SystemStatus } from '../../system/system-status.js';
import { activePaths, actorOf, machineOf, stateLine } from './states.js';
import { type Child, h } from './view.js';

// What each machine diagram shows for one status: which of its boxes are active, and its caption.
// The diagrams themselves are drawn at build time (scripts/machine-diagrams.ts); the server marks
// the active boxes in the first view and the browser script moves the marks live.

export interface DiagramView {
  /** The state paths in the diagram to highlight; for the root diagram, the running actors' ids. */
  active: string[];
  caption: Child;
}

const running = (s: SystemStatus) => s.actors.filter((a) => a.state !== 'stopped');

const pollers = (s: SystemStatus) => s.actors.filter((a) => machineOf(a.id) === 'poller');

/** What diagram `actor` shows for `s`. */
export const diagramView = (s: SystemStatus, actor: string): DiagramView => {
  if (actor === 'pulse') {
    const ids = running(s).map((a) => machineOf(a.id));
    return {
      active: [...new Set(ids)],
      caption: `${running(s).length} actors running: each box below is one of them.`,
    };
  }
  if (actor === 'poller') {
    const each = pollers(s);
    return {
      active: [...new Set(each.flatMap((p) => activePaths(p.value)))],
      caption:
        each.length === 0
          ? 'No source runs: one poller runs per source in .pulse/sources.json.'
          : h(
              'ul',
              { class: 'legend' },
              each.map((p) =>
                h(
                  'li',
                  {},
                  h('span', { class: 'mono' }, p.id.slice('poller:'.length)),
                  ': ',
                  stateLine(s, p),
                ),
              ),
            ),
    };
  }
  const it = actorOf(s, actor);
  return { active: activePaths(it.value), caption: stateLine(s, it) };
};
