#!/usr/bin/env node
// The `pulse` bin, and what `pulse setup` points agents' hooks at. CommonJS on purpose: agents run
// `pulse hook` on every tool call, and require() loads the hook's ES modules without starting
// Node's ESM loader, which an ES entry pays on every start (docs/benchmarks.md, "Hooks"). Every
// other command runs cli.js, the ES module with commander.

type HookCommand = typeof import('./commands/hook.js');

const requireHookCommand = (): HookCommand | null => {
  try {
    return require('./commands/hook.js');
  } catch (error) {
    // Node 21, and 22 before 22.12, cannot require() an ES module: cli.js answers the hook then.
    if ((error as NodeJS.ErrnoException).code === 'ERR_REQUIRE_ESM') return null;
    throw error;
  }
};

const hookCommand = process.argv[2] === 'hook' ? requireHookCommand() : null;
const hookOptions = hookCommand?.parseHookArgs(process.argv.slice(3)) ?? null;
if (hookCommand !== null && hookOptions !== null) void hookCommand.runHookProcess(hookOptions);
else void import('./cli.js');
