import type { PolledSource } from '../../machines/external.js';
import type { SourceTestResult } from '../../machines/sources.js';
import type { ClientPool } from '../sources/client-pool.js';
import { runSourceTest } from '../sources/source-test.js';

/** Tests a source through the daemon's own client pool: its servers, its environment, its clients. */
export const createSourceTester =
  ({ pool, secrets }: { pool: ClientPool; secrets: () => readonly string[] }) =>
  ({ source, raw }: { source: PolledSource; raw: boolean }): Promise<SourceTestResult> =>
    runSourceTest(pool, source, { raw, secrets: secrets() });
