import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/**
 * Summarises a V8 `.cpuprofile` (as `node --cpu-prof` writes it): where the samples fell, by
 * function (self time), by package or project folder, and inclusive time of the project's own
 * functions. Run: `node dist/bench/lib/cpu-profile-summary.js FILE.cpuprofile [top]`.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time by function, largest first. */
  functions: Array<{ name: string; ms: number }>;
  /** Self time by where the code lives (a package, node's internals, a project folder), largest first. */
  places: Array<{ name: string; ms: number }>;
  /** Inclusive time of the project's own functions (src/, machines/), largest first. */
  inclusive: Array<{ name: string; ms: number }>;
  /** Inclusive time of every function, idle and GC left out, largest first. */
  inclusiveAll: Array<{ name: string; ms: number }>;
}

const placeOf = (url: string): string => {
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return 'node internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/dist\/(src|machines|bench|bundle)\//.exec(url);
  if (own) return `${own[1]}/`;
  return url;
};

const nameOf = ({ callFrame: f }: ProfileNode): string => {
  const file = f.url.replace(/^.*\/(node_modules\/|dist\/)/, '$1');
  return `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
};

const sorted = (map: Map<string, number>) =>
  [...map].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);

export const summarizeProfile = (profile: CpuProfile): ProfileSummary => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const functions = new Map<string, number>();
  const places = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const inclusiveAll = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const ms = us / 1000;
    functions.set(nameOf(node), (functions.get(nameOf(node)) ?? 0) + ms);
    const place = placeOf(node.callFrame.url);
    places.set(place, (places.get(place) ?? 0) + ms);
    // Every own function on the stack gets the sample once, however deep it recurses.
    const onStack = new Set<string>();
    const allOnStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!;
      if (/\/dist\/(src|machines|bundle)\//.test(frame.callFrame.url)) onStack.add(nameOf(frame));
      allOnStack.add(nameOf(frame));
    }
    for (const name of onStack) inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
    if (!['(idle)', '(garbage collector)', '(program)'].includes(node.callFrame.functionName))
      for (const name of allOnStack) inclusiveAll.set(name, (inclusiveAll.get(name) ?? 0) + ms);
  }
  return {
    totalMs: (profile.endTime - profile.startTime) / 1000,
    functions: sorted(functions),
    places: sorted(places),
    inclusive: sorted(inclusive),
    inclusiveAll: sorted(inclusiveAll),
  };
};

const main = async () => {
  const [file, top = '25'] = process.argv.slice(2);
  if (!file) throw new Error('Usage: node dist/bench/lib/cpu-profile-summary.js FILE.cpuprofile [top]');
  const summary = summarizeProfile(JSON.parse(await readFile(file, 'utf8')) as CpuProfile);
  const n = Number(top);
  const list = (title: string, rows: ProfileSummary['functions']) => {
    console.log(`\n${title}`);
    for (const row of rows.slice(0, n)) {
      const share = ((row.ms / summary.totalMs) * 100).toFixed(1).padStart(5);
      console.log(`${row.ms.toFixed(0).padStart(8)} ms ${share} %  ${row.name}`);
    }
  };
  console.log(`profile: ${summary.totalMs.toFixed(0)} ms of wall time`);
  list('self time by place', summary.places);
  list('self time by function', summary.functions);
  list('inclusive time of own functions (src/, machines/)', summary.inclusive);
  list('inclusive time of any function (idle, GC and (program) left out)', summary.inclusiveAll);
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
