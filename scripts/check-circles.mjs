#!/usr/bin/env node
// `npm run lint`'s third step: no import circle in machines/ or src/, imports in src/ that point
// down the layers only (docs/architecture.md, "Layers"), and nothing outside test/ importing it.
// A type import counts: a circle of types still ties the files' changes together.
import { relative } from 'node:path';
import { parseCircular, parseDependencyTree } from 'dpdm';

/** The layers, low to high: a file imports from its own layer or a lower one, never a higher one. */
const LAYERS = [
  ['machines/'],
  ['src/os/', 'src/text/', 'src/package/'],
  ['src/log/', 'src/store/'],
  ['src/effects/', 'src/sources/', 'src/trust/', 'src/thinkers/'],
  ['src/system/', 'src/notify/'],
  ['src/mcp/', 'src/hooks/', 'src/http/', 'src/inspect/', 'src/fleet/'],
  ['src/setup/'],
  ['src/daemon/'],
  ['src/doctor/', 'src/commands/'],
  ['src/cli.ts', 'src/bin.cts'],
];

/** Folders whose circles are refused; the layer rule covers src/ (machines/ is its lowest layer). */
const CIRCLE_FREE = ['machines/', 'src/'];

/** What the tests, bench and sim share lives in harness/: none of these may import test/. */
const NOT_FROM_TEST = ['harness/', 'bench/', 'sim/', 'src/', 'machines/'];

const cwd = process.cwd();
const layerOf = (file) => LAYERS.findIndex((layer) => layer.some((prefix) => file.startsWith(prefix)));
const describeLayer = (index) => `layer ${index + 1} (${LAYERS[index].join(', ')})`;

const tree = await parseDependencyTree(
  ['machines/**/*.ts', 'src/**/*.ts', 'src/**/*.cts', 'harness/**/*.ts', 'bench/**/*.ts', 'sim/**/*.ts'],
  { context: cwd, transform: false, skipDynamicImports: false },
);
// dpdm names files from the context; keep only this repository's own files (no packages, no node: built-ins).
const OWN = ['src/', 'machines/', 'harness/', 'bench/', 'sim/', 'test/', 'scripts/'];
const own = (id) => id !== null && OWN.some((prefix) => id.startsWith(prefix));
const shortTree = Object.fromEntries(
  Object.entries(tree)
    .map(([file, deps]) => [relative(cwd, file), deps])
    .filter(([file]) => own(file)),
);

const problems = [];

const circles = parseCircular(shortTree).filter((circle) =>
  circle.every((file) => CIRCLE_FREE.some((prefix) => file.startsWith(prefix))),
);
for (const circle of circles) problems.push(`circle: ${[...circle, circle[0]].join(' -> ')}`);

for (const [file, deps] of Object.entries(shortTree)) {
  for (const dep of deps ?? []) {
    // An import dpdm cannot resolve is one the check cannot see: refused, not skipped (files the build writes excepted).
    if (dep.id === null && dep.request.startsWith('.') && !dep.request.endsWith('.generated.js')) {
      problems.push(
        `${file} imports ${dep.request}, which does not resolve (is tsconfig.json's moduleResolution NodeNext?)`,
      );
      continue;
    }
    const target = dep.id === null ? null : relative(cwd, dep.id);
    if (target === null || !own(target)) continue;
    if (target.startsWith('test/') && NOT_FROM_TEST.some((prefix) => file.startsWith(prefix))) {
      problems.push(`${file} imports ${target}: test/ is the tests' own; move what is shared to harness/`);
      continue;
    }
    const from = layerOf(file);
    const to = layerOf(target);
    if (from === -1) continue;
    if (to === -1 && !target.startsWith('src/') && !target.startsWith('machines/')) {
      problems.push(`${file} imports ${target}: src/ and machines/ import only each other`);
      continue;
    }
    if (to === -1) {
      problems.push(
        `${file} imports ${target}, which is in no layer: add its folder to LAYERS in ${relative(cwd, process.argv[1])}`,
      );
      continue;
    }
    if (to > from)
      problems.push(
        `${file} in ${describeLayer(from)} imports ${target} in ${describeLayer(to)}: imports point down`,
      );
  }
}

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  console.error(
    `import check: ${problems.length} problem${problems.length === 1 ? '' : 's'} (the layers: docs/architecture.md, "Layers")`,
  );
  process.exit(1);
}
console.log(
  `import check: no circle in machines/ or src/, every import in src/ points down (${Object.keys(shortTree).length} files)`,
);
