// The status page's machine diagrams, drawn at build time from the machine definitions
// themselves: a walk of each machine's state nodes and transitions, laid out by elkjs (the
// layout engine Stately's visualizer uses) and written as inline SVG. scripts/build-status-page.mjs
// runs this and writes the result into src/http/status-page/machines.generated.ts, so the daemon
// never loads elkjs: the page ships precomputed strings, and the client only toggles classes.
import elkModule, { type ElkExtendedEdge, type ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { eventLogMachine } from '../machines/event-log.js';
import { focusMachine } from '../machines/focus.js';
import { gateMachine } from '../machines/gate.js';
import { hookSessionsMachine } from '../machines/hook-sessions.js';
import { inboxMachine } from '../machines/inbox.js';
import { notifierMachine } from '../machines/notifier.js';
import { pollerMachine } from '../machines/poller.js';
import { pulseMachine } from '../machines/pulse.js';
import { replanMachine } from '../machines/replan.js';
import { sourcesMachine } from '../machines/sources.js';
import { steerMachine } from '../machines/steer.js';
import { watcherMachine } from '../machines/watcher.js';
import { escapeHtml } from '../src/http/status-page/html.js';

type ElkConstructor = typeof elkModule.default;
// elkjs is CommonJS: TypeScript sees its constructor as `.default`, esbuild's bundle as the import itself.
const ELK: ElkConstructor =
  (elkModule as { default?: ElkConstructor }).default ?? (elkModule as unknown as ElkConstructor);

/** Each machine the page draws, under the system id its actor runs as (`poller` stands for every `poller:<source>`). */
export const DRAWN_MACHINES: ReadonlyArray<{ actor: string; machine: AnyStateMachine }> = [
  { actor: 'pulse', machine: pulseMachine },
  { actor: 'replan', machine: replanMachine },
  { actor: 'log', machine: eventLogMachine },
  { actor: 'watcher', machine: watcherMachine },
  { actor: 'inbox', machine: inboxMachine },
  { actor: 'gate', machine: gateMachine },
  { actor: 'focus', machine: focusMachine },
  { actor: 'sources', machine: sourcesMachine },
  { actor: 'poller', machine: pollerMachine },
  { actor: 'hooks', machine: hookSessionsMachine },
  { actor: 'steer', machine: steerMachine },
  { actor: 'notify', machine: notifierMachine },
];

export interface Diagram {
  actor: string;
  /** Its width in pixels at its natural size, where its text reads as the page's. */
  width: number;
  svg: string;
}

/** A state's path below its machine's root, dot-joined: the key the page highlights by. */
const pathOf = (node: AnyStateNode) => node.path.join('.');

const children = (node: AnyStateNode): AnyStateNode[] => Object.values(node.states);

/** Every state node of a machine by path, the root's ('') included. */
const statesOf = (machine: AnyStateMachine): Map<string, AnyStateNode> => {
  const states = new Map<string, AnyStateNode>();
  const visit = (node: AnyStateNode) => {
    states.set(pathOf(node), node);
    for (const child of children(node)) visit(child);
  };
  visit(machine.root);
  return states;
};

/** A delay as people say it: `500 ms`, `30 s`, `5 min`; a named delay stays a name. */
const delayText = (delay: string) => {
  const ms = Number(delay);
  if (!Number.isFinite(ms)) return delay;
  return ms < 1000 ? `${ms} ms` : ms < 60_000 ? `${ms / 1000} s` : `${ms / 60_000} min`;
};

/** What an invoked actor is called on an edge: its own id, or its logic's name when the id is XState's (`0.gate.thinking`). */
const invokeNames = (machine: AnyStateMachine): Map<string, string> => {
  const names = new Map<string, string>();
  for (const node of statesOf(machine).values()) {
    for (const invoke of node.invoke) {
      const generated = /^\d+\./.test(invoke.id);
      names.set(invoke.id, generated && typeof invoke.src === 'string' ? invoke.src : invoke.id);
    }
  }
  return names;
};

/** An event type as a short edge label: XState's own events in words. */
const eventLabel = (type: string, invoked: Map<string, string>): string => {
  const after = /^xstate\.after\.([^.]+)\./.exec(type);
  if (after) return `after ${delayText(after[1]!)}`;
  const done = /^xstate\.done\.actor\.(.+)$/.exec(type);
  if (done) return `${invoked.get(done[1]!) ?? done[1]} done`;
  const failed = /^xstate\.error\.actor\.(.+)$/.exec(type);
  if (failed) return `${invoked.get(failed[1]!) ?? failed[1]} failed`;
  if (type.startsWith('xstate.done.state.')) return 'done';
  return type === '' ? 'always' : type;
};

const guardName = (guard: unknown): string | null =>
  guard === undefined
    ? null
    : typeof guard === 'string'
      ? guard
      : typeof guard === 'object' && guard !== null && typeof (guard as { type?: unknown }).type === 'string'
        ? (guard as { type: string }).type
        : 'guard';

interface Edge {
  from: string;
  to: string;
  label: string;
}

/** Every transition with a target, from each state node (the root's own included) to each target. */
const edgesOf = (machine: AnyStateMachine): Edge[] => {
  const edges: Edge[] = [];
  const invoked = invokeNames(machine);
  const visit = (node: AnyStateNode) => {
    const transitions = [...node.transitions.values()].flat().concat(node.always ?? []);
    for (const transition of transitions) {
      const guard = guardName(transition.guard);
      const label = eventLabel(transition.eventType, invoked) + (guard ? ` [${guard}]` : '');
      for (const target of transition.target ?? []) {
        // A transition to the root's own box would point at the frame around everything.
        if (target.path.length === 0) continue;
        edges.push({ from: node.path.length === 0 ? '' : pathOf(node), to: pathOf(target), label });
      }
    }
    for (const child of children(node)) visit(child);
  };
  visit(machine.root);
  // One arrow per source, target and label: a transition listed under two events stays two.
  return [...new Map(edges.map((e) => [`${e.from}>${e.to}>${e.label}`, e])).values()];
};

const CHAR = 7.2;
const SMALL_CHAR = 5.9;
const INITIAL = '·initial';
/** Marks the unseen edges that stack a parallel state's regions; they order the layout and are not drawn. */
const STACK = '·stack';

const elkId = (path: string) => (path === '' ? '·root' : path);

/** The ELK graph of a state and its substates, each compound one with a dot for its initial state. */
const elkNode = (node: AnyStateNode, edges: ElkExtendedEdge[]): ElkNode => {
  const path = pathOf(node);
  const inner = children(node);
  const label = node.path.length === 0 ? node.machine.id : node.key;
  if (inner.length === 0)
    return { id: elkId(path), width: Math.max(70, label.length * CHAR + 24), height: 30 };
  const kids = inner.map((child) => elkNode(child, edges));
  // Parallel regions have no edges between them, so the layered layout would set them side by
  // side, as wide as all of them together; an unseen edge from each region to the next puts each
  // one below the last instead, so a parallel state is as wide as its widest region.
  if (node.type === 'parallel') {
    for (const [i, region] of inner.slice(1).entries()) {
      const above = elkId(pathOf(inner[i]!));
      edges.push({ id: `${above}${STACK}`, sources: [above], targets: [elkId(pathOf(region))] });
    }
  }
  if (node.type === 'compound' && node.initial?.target[0]) {
    const dot = `${path}${INITIAL}`;
    kids.unshift({ id: dot, width: 10, height: 10 });
    edges.push({ id: `${dot}>`, sources: [dot], targets: [elkId(pathOf(node.initial.target[0]))] });
  }
  return {
    id: elkId(path),
    layoutOptions: {
      'elk.padding': `[top=${node.path.length === 0 ? 30 : 26},left=12,bottom=12,right=12]`,
      'elk.nodeSize.minimum': `(${label.length * CHAR + 30}, 40)`,
      'elk.nodeSize.constraints': 'MINIMUM_SIZE',
    },
    children: kids,
  };
};

/** The root machine: a frame around the actors it invokes, and the pollers the sources supervisor spawns. */
const systemGraph = (): { graph: ElkNode; edges: Edge[] } => {
  const invoked = [pulseMachine.root.config.invoke ?? []].flat() as Array<{ id: string; systemId?: string }>;
  const actors = [...invoked.map((i) => i.systemId ?? i.id), 'poller'];
  return {
    graph: {
      id: '·root',
      layoutOptions: { 'elk.padding': '[top=30,left=12,bottom=12,right=12]' },
      children: actors.map((id) => ({ id, width: Math.max(70, id.length * CHAR + 24), height: 30 })),
    },
    edges: [{ from: 'sources', to: 'poller', label: 'spawns one per source' }],
  };
};

const LAYOUT = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.layered.spacing.nodeNodeBetweenLayers': '34',
  'elk.spacing.nodeNode': '22',
  'elk.spacing.edgeLabel': '3',
  'elk.spacing.edgeNode': '14',
  'elk.edgeLabels.placement': 'CENTER',
  'elk.layered.edgeLabels.sideSelection': 'ALWAYS_DOWN',
  'elk.spacing.edgeEdge': '6',
  'elk.layered.spacing.edgeEdgeBetweenLayers': '6',
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
  'elk.json.edgeCoords': 'ROOT',
  'elk.json.shapeCoords': 'ROOT',
};

const n = (value: number | undefined) => Math.round((value ?? 0) * 10) / 10;

/** The arrowhead at the end of `from → to`. */
const arrowhead = (from: { x: number; y: number }, to: { x: number; y: number }) => {
  const angle = Math.atan2(to.y - from.y, to.x - from.x);
  const wing = (turn: number) =>
    `${n(to.x - 8 * Math.cos(angle + turn))},${n(to.y - 8 * Math.sin(angle + turn))}`;
  return `<polygon class="arrow" points="${n(to.x)},${n(to.y)} ${wing(0.4)} ${wing(-0.4)}"/>`;
};

/** One machine laid out and written as SVG: states as boxes (nested for compound ones), transitions as labelled arrows. */
const draw = async (actor: string, machine: AnyStateMachine): Promise<Diagram> => {
  const elkEdges: ElkExtendedEdge[] = [];
  const { graph, edges } =
    actor === 'pulse' ? systemGraph() : { graph: elkNode(machine.root, elkEdges), edges: edgesOf(machine) };
  for (const [i, edge] of edges.entries()) {
    elkEdges.push({
      id: `e${i}`,
      sources: [elkId(edge.from)],
      targets: [elkId(edge.to)],
      labels: [{ text: edge.label, width: edge.label.length * SMALL_CHAR + 6, height: 13 }],
    });
  }
  const laid = await new ELK().layout({
    ...graph,
    layoutOptions: { ...LAYOUT, ...graph.layoutOptions },
    edges: elkEdges,
  });

  const states = statesOf(machine);

  const boxes: string[] = [];
  const drawNode = (node: ElkNode) => {
    const x = n(node.x);
    const y = n(node.y);
    const w = n(node.width);
    const h = n(node.height);
    if (node.id.endsWith(INITIAL)) {
      boxes.push(`<circle class="initial" cx="${n(x + w / 2)}" cy="${n(y + h / 2)}" r="5"/>`);
      return;
    }
    const root = node.id === '·root';
    const path = root ? '' : node.id;
    const compound = (node.children?.length ?? 0) > 0;
    const label = root ? machine.id : (path.split('.').at(-1) ?? path);
    const state = states.get(path);
    const kind = root
      ? 'machine'
      : !compound
        ? 'atomic'
        : state?.parent?.type === 'parallel'
          ? 'region'
          : 'compound';
    const title = state?.description;
    const attribute =
      actor === 'pulse' && !root ? `data-actor="${escapeHtml(path)}"` : `data-state="${escapeHtml(path)}"`;
    boxes.push(
      `<g class="state ${kind}" ${attribute}>${title ? `<title>${escapeHtml(title)}</title>` : ''}` +
        `<rect x="${x}" y="${y}" width="${w}" height="${h}" rx="${compound ? 8 : 6}"/>` +
        (compound
          ? `<text x="${n(x + 10)}" y="${n(y + 17)}">${escapeHtml(label)}</text>`
          : `<text class="center" x="${n(x + w / 2)}" y="${n(y + h / 2 + 4)}">${escapeHtml(label)}</text>`) +
        '</g>',
    );
    for (const child of node.children ?? []) drawNode(child);
  };
  drawNode(laid);

  const arrows: string[] = [];
  const labels: string[] = [];
  for (const edge of laid.edges ?? []) {
    if (edge.id.endsWith(STACK)) continue;
    for (const section of edge.sections ?? []) {
      const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
      arrows.push(
        `<path class="edge" d="${points.map((p, i) => `${i ? 'L' : 'M'}${n(p.x)},${n(p.y)}`).join('')}"/>` +
          arrowhead(points.at(-2)!, points.at(-1)!),
      );
    }
    for (const label of edge.labels ?? []) {
      labels.push(
        `<text class="edge-label" x="${n(label.x! + 3)}" y="${n(label.y! + 10)}">${escapeHtml(label.text ?? '')}</text>`,
      );
    }
  }
  const width = Math.ceil(laid.width ?? 0);
  const height = Math.ceil(laid.height ?? 0);
  return {
    actor,
    width,
    svg:
      `<svg class="machine" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(`State diagram of the ${machine.id} machine`)}">` +
      boxes.join('') +
      arrows.join('') +
      labels.join('') +
      '</svg>',
  };
};

/** Every drawn machine's diagram, in page order. */
export const machineDiagrams = (): Promise<Diagram[]> =>
  Promise.all(DRAWN_MACHINES.map(({ actor, machine }) => draw(actor, machine)));

/** What each state means, by actor and state path: the machines' own `description`s. */
export const stateDescriptions = (): Record<string, Record<string, string>> =>
  Object.fromEntries(
    DRAWN_MACHINES.map(({ actor, machine }) => [
      actor,
      Object.fromEntries(
        [...statesOf(machine)]
          .filter(([path, node]) => path !== '' && node.description)
          .map(([path, node]) => [path, node.description!]),
      ),
    ]),
  );
