import type { PolledSource } from '../../machines/external.js';
import type { SourceTestResult } from '../../machines/sources-context.js';
import type { ClientPool } from '../sources/client/client-pool.js';
import type { ItemReading } from '../sources/items/extract.js';
import { runSourceTest } from '../sources/source-test.js';

/** Tests a source through the daemon's own client pool: its servers, its environment, its clients. */
export const createSourceTester =
  ({
    pool,
    secrets,
    readingOf,
  }: {
    pool: ClientPool;
    secrets: () => readonly string[];
    /** The source's map and rule fields in the current config, as its poller reads them. */
    readingOf: (source: string) => ItemReading;
  }) =>
  ({ source, raw }: { source: PolledSource; raw: boolean }): Promise<SourceTestResult> =>
    runSourceTest(pool, source, { raw, secrets: secrets(), reading: readingOf(source.name) });
