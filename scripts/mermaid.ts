import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

/** Characters a Mermaid label cannot hold as they are, as the entity codes Mermaid decodes. */
const ENTITIES: Record<string, string> = {
  '#': '#35;',
  ';': '#59;',
  ':': '#58;',
  '"': '#34;',
  '{': '#123;',
  '}': '#125;',
  '<': '#60;',
  '>': '#62;',
};

/** A label (transition, state name) Mermaid takes as text: colons, quotes, braces, `<>`, `#`, `;` as entity codes. */
export const escapeLabel = (text: string): string => text.replace(/[#;:"{}<>]/g, (c) => ENTITIES[c]!);

/** A multi-line note holds anything up to `end note`; only HTML and entity look-alikes need codes. */
const escapeNote = (text: string): string => text.replace(/[#<>]/g, (c) => ENTITIES[c]!);

const NOTE_WIDTH = 60;

/** Words in lines of at most `width` characters (a longer word stays whole). */
const wrap = (text: string, width = NOTE_WIDTH): string[] => {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
};

const children = (node: AnyStateNode): AnyStateNode[] => Object.values(node.states);

const descendants = (node: AnyStateNode): AnyStateNode[] =>
  children(node).flatMap((child) => [child, ...descendants(child)]);

/**
 * Mermaid ids are global to a diagram: each state gets the shortest tail of its path that no
 * other state shares (`idle`, or `scan_idle` beside `ack_idle`).
 */
const stateIds = (root: AnyStateNode): Map<AnyStateNode, string> => {
  const nodes = descendants(root);
  const depth = new Map(nodes.map((node) => [node, 1]));
  const idOf = (node: AnyStateNode) =>
    node.path
      .slice(-depth.get(node)!)
      .join('_')
      .replace(/[^A-Za-z0-9_]/g, '_');
  for (;;) {
    const count = new Map<string, number>();
    for (const node of nodes) count.set(idOf(node), (count.get(idOf(node)) ?? 0) + 1);
    const clashing = nodes.filter((node) => count.get(idOf(node))! > 1);
    const deepenable = clashing.filter((node) => depth.get(node)! < node.path.length);
    if (clashing.length > 0 && deepenable.length === 0) {
      throw new Error(
        `Machine ${root.id}: states ${clashing.map((n) => n.id).join(', ')} share a Mermaid id.`,
      );
    }
    if (deepenable.length === 0) return new Map(nodes.map((node) => [node, idOf(node)]));
    for (const node of deepenable) depth.set(node, depth.get(node)! + 1);
  }
};

interface Guard {
  type?: string;
  name?: string;
  guards?: readonly Guard[];
  stateValue?: unknown;
}

/** A guard's name, as the machine's `setup` names it; an inline function is `inline`. */
const guardName = (guard: unknown): string => {
  if (typeof guard === 'string') return guard;
  const g = guard as Guard;
  if (typeof guard === 'function') {
    if (g.name === 'not' && g.guards) return `not ${guardName(g.guards[0])}`;
    if ((g.name === 'and' || g.name === 'or') && g.guards) return g.guards.map(guardName).join(` ${g.name} `);
    if (g.name === 'stateIn') return `in ${JSON.stringify(g.stateValue)}`;
    return 'inline';
  }
  return g.type ?? 'inline';
};

/** What an event type reads as: `done loadJournal` for an invoked actor, `after settle` for a delay. */
const eventLabel = (
  node: AnyStateNode,
  transition: AnyTransitionDefinition,
  invokes: Map<string, string>,
) => {
  const type = String(transition.eventType);
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(type);
  if (actor) return `${actor[1]} ${invokes.get(actor[2]!) ?? actor[2]}`;
  const delayed = node.after.find((t) => t.eventType === type);
  if (delayed)
    return `after ${typeof delayed.delay === 'number' ? `${delayed.delay} ms` : String(delayed.delay)}`;
  const stateDone = /^xstate\.done\.state\.(.+)$/.exec(type);
  if (stateDone) return `done ${stateDone[1]}`;
  return type === '' ? 'always' : type;
};

/** The transitions of a node that change state, in definition order: `on`, invoke results, `after`, then `always`. */
const targeted = (node: AnyStateNode): { transition: AnyTransitionDefinition; fallback: boolean }[] => {
  const groups = [...node.transitions.values(), node.always ?? []];
  return groups.flatMap((group) =>
    group.flatMap((transition, i) =>
      transition.target === undefined || transition.target.length === 0
        ? []
        : [
            {
              transition,
              fallback: transition.guard === undefined && i > 0 && group.slice(0, i).every((t) => t.guard),
            },
          ],
    ),
  );
};

/**
 * A Mermaid `stateDiagram-v2` of a machine, drawn from its definition: nested and parallel
 * (`--`) states, initial states, every transition that changes state (`event [guard]`, `after
 * <delay>`, `always`, `done` / `error` of invoked actors; an unguarded fallback reads `[else]`),
 * and each state's description as a note. Transitions that only run actions are left out.
 */
export const stateDiagram = (machine: AnyStateMachine): string => {
  const root = machine.root;
  const ids = stateIds(root);
  const invokes = new Map(
    [root, ...descendants(root)].flatMap((node) =>
      node.invoke.map((inv) => [inv.id, typeof inv.src === 'string' ? inv.src : inv.id] as const),
    ),
  );
  const lines = ['stateDiagram-v2'];
  const emit = (depth: number, line: string) => lines.push(`${'  '.repeat(depth)}${line}`);

  const note = (depth: number, id: string, description: string | undefined) => {
    if (description === undefined || description.trim() === '') return;
    emit(depth, `note right of ${id}`);
    for (const line of wrap(escapeNote(description)))
      emit(depth + 1, line.replace(/^end note/, '#101;nd note'));
    emit(depth, 'end note');
  };

  const transitions = (depth: number, node: AnyStateNode, from: string) => {
    for (const { transition, fallback } of targeted(node)) {
      const guard =
        transition.guard === undefined ? (fallback ? ' [else]' : '') : ` [${guardName(transition.guard)}]`;
      const label = escapeLabel(`${eventLabel(node, transition, invokes)}${guard}`);
      for (const target of transition.target!)
        emit(depth, `${from} --> ${ids.get(target) ?? root.id} : ${label}`);
    }
  };

  /** The states inside `parent`, at `depth`: initial arrow, then each state, its note and its transitions. */
  const body = (depth: number, parent: AnyStateNode) => {
    if (parent.type === 'compound') {
      for (const target of parent.initial.target) emit(depth, `[*] --> ${ids.get(target)}`);
    }
    children(parent).forEach((node, i) => {
      if (parent.type === 'parallel' && i > 0) emit(depth, '--');
      const id = ids.get(node)!;
      const named = id === node.key ? id : `"${escapeLabel(node.key)}" as ${id}`;
      if (children(node).length > 0) {
        emit(depth, `state ${named} {`);
        body(depth + 1, node);
        emit(depth, '}');
      } else if (id !== node.key) emit(depth, `state ${named}`);
      else emit(depth, id);
      note(depth, id, node.description);
      transitions(depth, node, id);
      if (node.type === 'final') emit(depth, `${id} --> [*]`);
    });
  };

  const boxed = children(root).length === 0 || targeted(root).length > 0;
  if (!boxed) {
    body(1, root);
    return `${lines.join('\n')}\n`;
  }
  // The machine as one box: its states, or (the root has none) its invoked actors side by side.
  emit(1, `[*] --> ${root.id}`);
  emit(1, `state ${root.id} {`);
  if (children(root).length > 0) body(2, root);
  else
    root.invoke.forEach((inv, i) => {
      if (i > 0) emit(2, '--');
      const src = typeof inv.src === 'string' ? inv.src : inv.id;
      const label = inv.systemId === undefined || inv.systemId === src ? src : `${inv.systemId} (${src})`;
      emit(2, `state "${escapeLabel(label)}" as invoked_${inv.id.replace(/[^A-Za-z0-9_]/g, '_')}`);
    });
  emit(1, '}');
  note(1, root.id, root.description);
  transitions(1, root, root.id);
  return `${lines.join('\n')}\n`;
};
