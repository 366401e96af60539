import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type InstallRun, install, type PackedTarball, pack } from '../../harness/npm-package.js';
import { BUNDLED, type PulseCommand, UNBUNDLED_CLI } from '../lib/daemon.js';
import { type GeneratedHistory, writeHistory } from '../lib/generated-history.js';
import { measureStartup, type StartupSample } from '../lib/startup.js';
import { buildFloor, captureFloorAnswer, measureFloorStartup } from './floor-startup.js';

/** The package, from dist/bench/package/ where `npm run bench` runs this. */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** How much to measure. */
export interface PackagePlan {
  /** Installs of the tarball, each into a fresh prefix. */
  installs: number;
  /** Cold starts of each way of running pulse on each history, round-robin. */
  startups: number;
}

/** The ways of running pulse started side by side; the last is the one judged. */
export const VARIANTS = ['unbundled', 'bundled', 'installed'] as const;
export type Variant = (typeof VARIANTS)[number];

/** History sizes the start-ups run on. */
export const PACKAGE_SIZES = [0, 100_000] as const;

export interface PackageResult {
  tarball: PackedTarball;
  installs: InstallRun[];
  /** By variant, then by history size (index of PACKAGE_SIZES). */
  startups: Record<Variant, StartupSample[][]>;
  /** spawn → exit of `node -e 0`, once per round: the floor of any Node process. */
  nodeFloorMs: number[];
  /** spawn → first tool call of the bundled SDK + Hono floor server, once per round (floor-startup.ts). */
  stackFloorMs: number[];
  /** The first start from each fresh install, on the empty project: no code cache yet. */
  firstStarts: StartupSample[];
}

const nodeFloor = () =>
  new Promise<number>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });

/**
 * The package as npm users get it: packs the tarball, installs it into fresh prefixes (timed),
 * starts each install once (no code cache yet), then starts pulse from the first install, from the bundle in dist/ and from tsc's unbundled
 * output, side by side on an empty project and on one with 100,000 events.
 */
export const measurePackage = async (
  dir: string,
  plan: PackagePlan,
  progress: (line: string) => void,
): Promise<PackageResult> => {
  // The bench has just built dist/ (`npm run bench` builds first): packed as prepack would leave it.
  const tarball = await pack(dir, ROOT);
  progress(`packed ${tarball.file}: ${tarball.files.length} files, ${tarball.bytes} bytes`);
  const installs: InstallRun[] = [];
  for (let i = 0; i < plan.installs; i++)
    installs.push(await install(tarball.file, join(dir, `prefix-${i}`)));
  progress(`installed ${plan.installs} times: ${installs.map((r) => Math.round(r.ms)).join(', ')} ms`);
  const commands: Record<Variant, PulseCommand> = {
    installed: { program: join(dir, 'prefix-0', 'bin', 'pulse'), args: [] },
    bundled: BUNDLED,
    unbundled: { program: process.execPath, args: [UNBUNDLED_CLI] },
  };
  const histories: GeneratedHistory[] = [];
  for (const size of PACKAGE_SIZES) {
    const project = join(dir, `history-${size}`);
    await mkdir(project);
    histories.push(await writeHistory(project, size));
  }
  // Each install's first start, before its daemon has written the code cache (it does as it stops).
  const firstStarts: StartupSample[] = [];
  for (let i = 0; i < plan.installs; i++)
    firstStarts.push(
      await measureStartup(histories[0]!.project, histories[0]!.latestEventId, {
        program: join(dir, `prefix-${i}`, 'bin', 'pulse'),
        args: [],
      }),
    );
  progress(`first starts: ${firstStarts.map((s) => Math.round(s.firstCallMs)).join(', ')} ms`);
  const floorLoader = await buildFloor(join(dir, 'floor'));
  const floorAnswer = await captureFloorAnswer(histories[0]!.project, join(dir, 'floor-answer.json'));
  // Its first start writes its code cache, as each install's first start does pulse's.
  await measureFloorStartup(floorLoader, floorAnswer);
  const startups = Object.fromEntries(
    VARIANTS.map((variant) => [variant, histories.map((): StartupSample[] => [])]),
  ) as Record<Variant, StartupSample[][]>;
  const nodeFloorMs: number[] = [];
  const stackFloorMs: number[] = [];
  const cases = VARIANTS.flatMap((variant) => histories.map((_, size) => ({ variant, size })));
  for (let round = 0; round < plan.startups; round++) {
    nodeFloorMs.push(await nodeFloor());
    stackFloorMs.push(await measureFloorStartup(floorLoader, floorAnswer));
    // A rotating order, so no way of running pulse always goes first (or right after a 100,000-event start).
    for (let k = 0; k < cases.length; k++) {
      const { variant, size } = cases[(k + round) % cases.length]!;
      const { project, latestEventId } = histories[size]!;
      startups[variant][size]!.push(await measureStartup(project, latestEventId, commands[variant]));
    }
    progress(`start-ups: round ${round + 1}/${plan.startups} done`);
  }
  return { tarball, installs, startups, nodeFloorMs, stackFloorMs, firstStarts };
};
