import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The agent suite: the real agent CLIs (test/agents/cli), each against a scripted
// model on 127.0.0.1. Slower than the unit suites (a CLI start per run), so it runs on its own
// (npm run test:agents); `PULSE_AGENT_SUITE` lets its files run (they skip under the main config).
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/agents/**/*.test.ts'],
    globalSetup: ['test/support/build.ts'],
    env: { PULSE_AGENT_SUITE: '1' },
    testTimeout: 120_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    passWithNoTests: false,
  },
});
