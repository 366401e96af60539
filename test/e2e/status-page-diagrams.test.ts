import { describe, expect, it } from 'vitest';
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { pulseMachine } from '../../machines/pulse.js';
import { DRAWN_MACHINES } from '../../scripts/machine-diagrams.js';
import { escapeHtml } from '../../src/http/status-page/html.js';
import { DIAGRAMS, STATE_TEXT } from '../../src/http/status-page/machines.generated.js';
import { DIAGRAM_MAX_WIDTH } from '../../src/http/status-page/page.js';

/*
 * The status page's diagrams come from the machine definitions: the boxes of each diagram the
 * page ships (built by scripts/build-status-page.mjs) are exactly the states of its machine, so a
 * state added, renamed or removed in a machine fails here until the page is built again, and a
 * machine the root starts without a diagram fails too.
 */

const statePaths = (machine: AnyStateMachine): string[] => {
  const paths: string[] = [];
  const visit = (node: AnyStateNode) => {
    if (node.path.length > 0) paths.push(node.path.join('.'));
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return paths.sort();
};

const boxes = (svg: string, attribute: 'state' | 'actor') =>
  [...svg.matchAll(new RegExp(`<g class="state \\w+" data-${attribute}="([^"]*)"`, 'g'))]
    .map((m) => m[1]!)
    .filter((path) => path !== '')
    .sort();

const diagram = (actor: string) => DIAGRAMS.find((d) => d.actor === actor)!.svg;

describe('the machine diagrams on the status page', () => {
  it('draws one box for every state of every machine, and no other', () => {
    for (const { actor, machine } of DRAWN_MACHINES.filter((m) => m.actor !== 'pulse')) {
      expect(boxes(diagram(actor), 'state'), actor).toEqual(statePaths(machine));
    }
  });

  it('draws every actor the root machine starts, and gives each a diagram of its own', () => {
    const invoked = [pulseMachine.root.config.invoke ?? []]
      .flat()
      .map((i) => (i as { systemId?: string; id: string }).systemId ?? (i as { id: string }).id);
    expect(boxes(diagram('pulse'), 'actor')).toEqual([...invoked, 'poller'].sort());
    expect(DIAGRAMS.map((d) => d.actor).sort()).toEqual(['pulse', ...invoked, 'poller'].sort());
  });

  it('lays out every diagram to fit the page, a parallel state with its regions one above the other', () => {
    const widths = Object.fromEntries(DIAGRAMS.map((d) => [d.actor, d.width]));
    const tooWide = Object.entries(widths).filter(([, width]) => width > DIAGRAM_MAX_WIDTH);
    expect(tooWide, `diagram widths ${JSON.stringify(widths)}, page ${DIAGRAM_MAX_WIDTH}`).toEqual([]);
    // Each box's width is the SVG's own, not a scaled one: the text reads at the page's size.
    for (const { actor, svg, width } of DIAGRAMS) expect(svg, actor).toContain(`width="${width}"`);

    // The log's two regions: `ack` below `scan`, not beside it.
    const box = (path: string) => {
      const rect = new RegExp(
        `data-state="${path}">(?:<title>[^<]*</title>)?<rect x="([\\d.]+)" y="([\\d.]+)" width="([\\d.]+)" height="([\\d.]+)"`,
      ).exec(diagram('log'));
      const [x, y, w, h] = rect!.slice(1).map(Number) as [number, number, number, number];
      return { x, y, w, h };
    };
    const scan = box('ready.scan');
    const ack = box('ready.ack');
    expect(ack.y).toBeGreaterThanOrEqual(scan.y + scan.h);
  });

  it('says what each state means in the words of its machine', () => {
    const replan = DRAWN_MACHINES.find((m) => m.actor === 'replan')!.machine;
    expect(STATE_TEXT.replan.pending).toBe(replan.root.states.pending!.description);
    // The description is the box's tooltip too.
    expect(diagram('replan')).toContain(
      `<title>${escapeHtml(replan.root.states.pending!.description!)}</title>`,
    );
  });
});
