import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The real agent CLIs: npm run test:agents (test/agents/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/agents/**'],
    // The second prints the model suites' coverage table at the end of a run (npm run test:model).
    globalSetup: ['test/support/build.ts', 'test/support/model-coverage-summary.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn daemons and watch real folders; two workers match the two cores of our machines.
    maxWorkers: 2,
    passWithNoTests: false,
  },
});
