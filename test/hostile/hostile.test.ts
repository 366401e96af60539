import { afterAll, beforeAll, describe, it } from 'vitest';
import { type RunningDaemon, removeProject } from '../support/daemon.js';
import { blindRows } from './blind-rows.js';
import { fileRows } from './file-rows.js';
import { figures, type HostileCase, type Planted, runRow, startPlanted, tally } from './harness.js';
import { protocolRows } from './protocol-rows.js';
import { readRows } from './read-rows.js';
import { fixtureChildren, sourceRows } from './source-rows.js';

/*
 * The hostile-input suite: a table of hostile inputs, each with the clear error
 * (or the safe, documented behaviour) it must get, and after every row the same check that the
 * daemon lives and nothing was lost (see assertNothingLost). The last line printed sums it up.
 */

const projects: string[] = [];

afterAll(async () => {
  for (const child of fixtureChildren.splice(0)) child.kill('SIGKILL');
  await Promise.all(projects.splice(0).map(removeProject));
  console.log(
    `hostile input: ${tally.tried} cases tried, ${tally.passed} passed, ${tally.bugsFixed} bugs found and fixed, ${tally.lost} things lost`,
  );
  console.log(
    `blind-spot figures: a call beside a 20 GiB guidance.md ${figures.hugeFileCallMs ?? '-'} ms; RSS with /proc/self/pagemap as constraints.md ${figures.procRssMiB ?? '-'} MiB`,
  );
});

describe('hostile requests to one daemon (rows that cannot interfere)', () => {
  let daemon: RunningDaemon;
  let planted: Planted;

  beforeAll(async () => {
    ({ daemon, planted } = await startPlanted('pulse-hostile-http-'));
    projects.push(daemon.project);
  });

  afterAll(async () => {
    await daemon?.stop();
  });

  for (const row of protocolRows) {
    it(row.name, async () => {
      daemon = await runRow(row, daemon, planted);
    });
  }
});

/** Rows that damage state: a fresh daemon each. */
const eachOnFreshDaemon = (title: string, rows: HostileCase[], timeout: number) =>
  describe(title, () => {
    for (const row of rows) {
      it(
        row.name,
        async () => {
          const { daemon, planted } = await startPlanted('pulse-hostile-');
          projects.push(daemon.project);
          let running = daemon;
          try {
            running = await runRow(row, daemon, planted);
          } finally {
            await running.stop();
            await daemon.stop();
            for (const child of fixtureChildren.splice(0)) child.kill('SIGKILL');
          }
        },
        timeout,
      );
    }
  });

eachOnFreshDaemon('hostile files in .pulse/', fileRows, 30_000);
eachOnFreshDaemon('files pulse cannot read, .pulse/ swapped, a second daemon', blindRows, 60_000);
eachOnFreshDaemon('hostile source servers', sourceRows, 60_000);
eachOnFreshDaemon('reads that would leave the project: symlinks and special files', readRows, 60_000);
