import { defineConfig } from 'vitest/config';

// The agent suite: the real agent CLIs against a real pulse, only the model scripted. Slow, so it
// runs on its own; `PULSE_AGENT_SUITE` lets its files run (they skip under the main config).
export default defineConfig({
  test: {
    include: ['test/agents/**/*.test.ts'],
    globalSetup: ['test/helpers/build.ts'],
    env: { PULSE_AGENT_SUITE: '1' },
    testTimeout: 120_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    passWithNoTests: false,
  },
});
