import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';
import type { Mermaid } from 'mermaid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyStateNode } from 'xstate';
import { MACHINES, machinesDocument } from '../../scripts/machines-doc.js';
import { escapeLabel } from '../../scripts/mermaid.js';

const committed = readFileSync(new URL('../../docs/machines.md', import.meta.url), 'utf8');
const diagrams = [...committed.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((match) => match[1]!);
const cases = MACHINES.map(({ systemId, machine }, i) => ({ systemId, machine, diagram: diagrams[i] ?? '' }));

const nodes = (node: AnyStateNode): AnyStateNode[] =>
  Object.values(node.states).flatMap((child) => [child, ...nodes(child)]);

/** The states a diagram declares, by their label: `idle`, `state ack {`, `state "idle" as ack_idle`. */
const declared = (diagram: string) =>
  [
    ...diagram
      .replace(/note right of[\s\S]*?end note/g, '')
      .matchAll(/^\s*(?:state )?(?:"([^"]*)" as (\w+)|(\w+))(?: \{)?$/gm),
  ].map((m) => ({
    label: m[1] ?? m[3]!,
    id: m[2] ?? m[3]!,
  }));

/** Each note's text by the id it is attached to, with entity codes decoded and lines joined. */
const notes = (diagram: string) =>
  new Map(
    [...diagram.matchAll(/^\s*note right of (\w+)\n([\s\S]*?)\n\s*end note$/gm)].map((m) => [
      m[1]!,
      m[2]!
        .replace(/#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
        .replace(/\s+/g, ' ')
        .trim(),
    ]),
  );

let dom: JSDOM;
let mermaid: Mermaid;

beforeAll(async () => {
  // Mermaid reads `window` and `document` when it loads: a jsdom window is enough to parse.
  dom = new JSDOM('<!doctype html><html><body></body></html>');
  Object.assign(globalThis, { window: dom.window, document: dom.window.document });
  mermaid = (await import('mermaid')).default;
});

afterAll(() => {
  Reflect.deleteProperty(globalThis, 'window');
  Reflect.deleteProperty(globalThis, 'document');
  dom.window.close();
});

describe('docs/machines.md', () => {
  it('is what npm run docs:machines writes from the machines now', () => {
    expect(committed, 'docs/machines.md is out of date: run npm run docs:machines').toBe(machinesDocument());
  });

  it('has one diagram per machine', () => {
    expect(diagrams).toHaveLength(MACHINES.length);
  });

  it.each(cases)('parses the $systemId diagram with Mermaid', async ({ diagram }) => {
    await expect(mermaid.parse(diagram)).resolves.toMatchObject({ diagramType: 'stateDiagram' });
  });

  it.each(cases)('shows every state of $systemId, with its description as a note', ({ machine, diagram }) => {
    const states = nodes(machine.root);
    const declarations = declared(diagram);
    const byId = notes(diagram);
    expect(declarations.map((d) => d.label).filter((label) => states.some((s) => s.key === label))).toEqual(
      states.map((s) => s.key),
    );
    for (const state of states.filter((s) => s.description !== undefined)) {
      const ids = declarations.filter((d) => d.label === state.key).map((d) => d.id);
      expect(
        ids.map((id) => byId.get(id)),
        state.id,
      ).toContain(state.description);
    }
    if (machine.root.description !== undefined) expect(byId.get(machine.id)).toBe(machine.root.description);
  });

  it('rejects a broken diagram, so the parse check can fail', async () => {
    const log = cases.find((c) => c.systemId === 'log')!.diagram;
    const unclosed = log.replace(/\n {2}\}\n/, '\n');
    expect(unclosed).not.toBe(log);
    await expect(mermaid.parse(unclosed)).rejects.toThrow(/Parse error/);
    await expect(mermaid.parse('stateDiagram-v2\n  idle --> : go\n')).rejects.toThrow(/Parse error/);
  });

  it('escapes what a label cannot hold, which Mermaid refuses raw', async () => {
    const label = 'done: a::b; "c" {d} <e> #1';
    await expect(mermaid.parse(`stateDiagram-v2\n  a --> b : ${label}\n`)).rejects.toThrow(/Parse error/);
    await expect(mermaid.parse(`stateDiagram-v2\n  state "${label}" as c\n`)).rejects.toThrow(/Parse error/);
    await expect(mermaid.parse(`stateDiagram-v2\n  a --> b : ${escapeLabel(label)}\n`)).resolves.toBeTruthy();
    await expect(
      mermaid.parse(`stateDiagram-v2\n  state "${escapeLabel(label)}" as c\n`),
    ).resolves.toBeTruthy();
  });
});
