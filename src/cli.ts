#!/usr/bin/env node
import { constants } from 'node:os';
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { errorMessage } from '../machines/error-message.js';
import type { StartOptions } from './commands/start.js';
import { HOOK_AGENTS, type HookAgent, isHookAgent } from './hooks/events.js';
import { LOG_LEVELS } from './log/levels.js';
import { DEFAULT_PORT } from './package/defaults.js';
import { VERSION } from './package/version.js';
import { SETUP_AGENTS, type SetupAgent } from './setup/agent-names.js';
import { pulsePaths } from './store/paths.js';
import { parseDuration } from './text/duration.js';
import { terminalText } from './text/terminal-text.js';

// Commands import what they need when they run, so `--version`, `--help` and the agent hooks do
// not pay for loading the MCP SDK, XState and the watcher. No top-level await: the bundle is a
// script, for V8's code cache (scripts/bundle-loader.ts).

const parsePort = (value: string): number => {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('Expected a port number from 0 to 65535 (0 picks a free port).');
  }
  return port;
};

/** `--port N`, or the `PULSE_PORT` variable: which of your daemons a command talks to. */
const portOption = (description: string) =>
  new Option('--port <port>', `${description}; or PULSE_PORT`).env('PULSE_PORT').argParser(parsePort);

/** The `--port` of a command that talks to a running daemon: only a daemon of yours there, as your records say. */
const daemonPort = () =>
  portOption(
    "your daemon's port: only a daemon of yours listening there is asked (default: yours serving the project)",
  );

const parseCount = (value: string): number => {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1)
    throw new InvalidArgumentError('Expected a whole number, at least 1.');
  return count;
};

const parseDurationFlag = (value: string): number => {
  try {
    return parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};

const fail = (error: unknown): never => {
  console.error(`pulse: ${terminalText(errorMessage(error))}`);
  process.exit(1);
};

const program = new Command('pulse')
  .description('Interrupt-aware MCP sidecar for long-running coding agents.')
  .version(`pulse-agent ${VERSION}`, '-V, --version', 'print the version')
  .showHelpAfterError();

program
  .command('start')
  .description('initialise .pulse/ and serve MCP until stopped')
  .option('-p, --project <dir>', 'project folder to watch (created if missing)', '.')
  .option(
    '--detach',
    'run in the background: return once the endpoint answers (exit 1 with the reason if it does not), log to .pulse/pulse.log; pulse stop ends it',
  )
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .addOption(portOption('port to listen on (0 for any free port)').default(DEFAULT_PORT))
  .option('--inspect', 'stream every actor to the Stately inspector through a local relay')
  .option(
    '--inspect-port <port>',
    "the inspector relay's port (default 5678; 0 for any free port); implies --inspect",
    parsePort,
  )
  .addOption(
    new Option('--log-level <level>', 'what is logged, to .pulse/pulse.log (JSON lines) and stderr')
      .choices(LOG_LEVELS)
      .default('info')
      .env('PULSE_LOG_LEVEL'),
  )
  .addOption(
    new Option(
      '--token <token>',
      'require Authorization: Bearer <token> on every request (at least 16 characters); required with a non-loopback --host. Prefer PULSE_TOKEN=<token>: a command line is visible to every account on this machine (ps)',
    ).env('PULSE_TOKEN'),
  )
  .option(
    '--allowed-host <name>',
    'also answer requests for this Host name (a DNS name of this machine), beside loopback and the bound address; repeatable',
    (name: string, names: string[] = []) => [...names, name],
  )
  .option(
    '--max-connections <n>',
    'HTTP connections open at once; past it a newcomer takes the place of the oldest stalled one (default 256, at most half the open-file limit)',
    parseCount,
  )
  .option(
    '--headers-timeout <duration>',
    "a request's headers must arrive within this (default 10s)",
    parseDurationFlag,
  )
  .option(
    '--request-timeout <duration>',
    'a whole request must arrive within this; responses, streams included, are not limited (default 30s)',
    parseDurationFlag,
  )
  .option(
    '--max-sessions <n>',
    'MCP sessions held at once; past it the least recently used idle one is closed (default 1000)',
    parseCount,
  )
  .option(
    '--session-idle <duration>',
    'close an MCP session after this long without a request or an open stream (default 30m)',
    parseDurationFlag,
  )
  .option(
    '--notify',
    'desktop notifications (notify-send or osascript): every agent has replanned, an agent held too long, external events that need you',
  )
  .option(
    '--notify-held-after <duration>',
    'with --notify, how long an agent may owe an ack before it is news (default 5m); implies --notify',
    parseDurationFlag,
  )
  .option(
    '--fleet <url>',
    'join a fleet on NATS JetStream (nats://host:4222, or PULSE_FLEET): steers and acks reach every machine serving this repository; password and token only from PULSE_FLEET_PASSWORD / PULSE_FLEET_TOKEN',
  )
  .option('--fleet-creds <file>', "the fleet's NATS credentials file (or PULSE_FLEET_CREDS)")
  .option('--fleet-nkey <file>', "a file with the fleet's NATS nkey seed (or PULSE_FLEET_NKEY)")
  .option(
    '--fleet-user <name>',
    "the fleet's NATS user (or PULSE_FLEET_USER; the password from PULSE_FLEET_PASSWORD)",
  )
  .option(
    '--fleet-ca <file>',
    "a CA file the fleet's NATS server certificate must chain to (or PULSE_FLEET_CA)",
  )
  .option(
    '--fleet-project <name>',
    'allow .pulse/fleet-project to name this fleet project (or PULSE_FLEET_PROJECTS=a,b); repeatable',
    (name: string, names: string[] = []) => [...names, name],
  )
  .addOption(
    new Option(
      '--trust-sources <hash>',
      'trust .pulse/sources.json only if its bytes have this hash (sha256:<hex>, from `pulse trust --print-hash`), for CI and scripts; any other content is refused',
    ).env('PULSE_TRUST_SOURCES'),
  )
  .action(async (options: StartOptions) => {
    if (options.notifyHeldAfter !== undefined) options.notify = true;
    if (options.trustSources !== undefined) {
      const { trustByHash } = await import('./commands/trust.js');
      const said = await trustByHash(pulsePaths(options.project), options.trustSources).catch(fail);
      if (said !== null) console.error(said);
    }
    const { runDaemonUntilSignal, startInBackground } = await import('./commands/start.js');
    if (options.detach) console.log(await startInBackground(options, process.argv.slice(3)).catch(fail));
    else await runDaemonUntilSignal(options).catch(fail);
  });

program
  .command('trust')
  .description(
    'show what .pulse/sources.json would run, connect to and send (commands, URLs, variables, headers), then trust its exact content for you; nothing in it runs before, or after any change',
  )
  .option('-p, --project <dir>', 'project folder', '.')
  .option('--yes', 'trust without asking (what it runs is still printed)')
  .option('--revoke', "take back every trust of this project's sources.json")
  .option('--show', 'only show what it would run and whether it is trusted')
  .option('--print-hash', 'print its hash, what pulse start --trust-sources (PULSE_TRUST_SOURCES) takes')
  .action(async (options: { project: string } & import('./commands/trust.js').TrustOptions) => {
    const { runTrust } = await import('./commands/trust.js');
    const outcome = await runTrust(pulsePaths(options.project), options).catch(fail);
    console.log(outcome.text);
    if (!outcome.ok) process.exitCode = 1;
  });

program
  .command('stop')
  .description('stop the daemon serving the project (SIGTERM), and wait until it has shut down')
  .option('-p, --project <dir>', 'project folder', '.')
  .addOption(daemonPort())
  .action(async (options: { project: string; port?: number }) => {
    const { stopDaemon } = await import('./commands/stop.js');
    console.log(await stopDaemon(pulsePaths(options.project), process.env, options.port).catch(fail));
  });

program
  .command('init')
  .description('create .pulse/ with its templates, without starting the daemon')
  .option('-p, --project <dir>', 'project folder', '.')
  .action(async (options: { project: string }) => {
    const { runInit } = await import('./commands/init.js');
    for (const line of await runInit(options.project).catch(fail)) console.log(line);
  });

program
  .command('status')
  .description(
    'show the replan state, from the running daemon or from the files; without -p, every project the running daemon serves',
  )
  .option('-p, --project <dir>', 'project folder (default: list the projects served, else this folder)')
  .addOption(
    portOption(
      "your daemon's port: without -p, list the projects of your daemon listening there (only a daemon of yours is asked)",
    ),
  )
  .option('--json', 'print JSON')
  .option('--fleet', 'with a daemon started with --fleet: also list the fleet project’s members')
  .action(async (options: { project?: string; port?: number; json?: boolean; fleet?: boolean }) => {
    if (options.project === undefined) {
      const { formatProjectList, listServedProjects } = await import('./commands/status-list.js');
      const list = await listServedProjects(process.cwd(), options.port).catch(fail);
      if (list !== null) {
        console.log(options.json ? JSON.stringify(list, null, 2) : formatProjectList(list));
        return;
      }
      if (options.port !== undefined) fail(`Your daemon on port ${options.port} does not answer.`);
    }
    const { formatStatus, readStatus } = await import('./commands/status.js');
    const report = await readStatus(pulsePaths(options.project ?? '.'), options.port).catch(fail);
    console.log(
      options.json ? JSON.stringify(report, null, 2) : formatStatus(report, Date.now(), options.fleet),
    );
  });

/** `pulse guide` and `pulse constrain`: the same command for guidance.md and constraints.md. */
const steerCommand = (name: 'guide' | 'constrain', file: 'guidance' | 'constraints', what: string) =>
  program
    .command(name)
    .description(
      `write .pulse/${file}.md (${what}) through the running daemon, and say which agents must now replan; --wait follows each agent's ack and plan diff`,
    )
    .argument('[text]', `the new ${file}; - reads it from stdin`)
    .option('-p, --project <dir>', 'project folder (default: .)')
    .option('--append', `add the text as a paragraph instead of replacing ${file}.md`)
    .option(
      '--edit',
      `write it in $EDITOR (then $VISUAL, then vi), on a copy of ${file}.md; saved only if changed`,
    )
    .option(
      '--wait',
      'wait until every agent has acknowledged, printing each ack with its plan diff (exit 3 on timeout)',
    )
    .option('--timeout <duration>', 'with --wait, how long to wait (default 10m)', parseDurationFlag)
    .option('--all', 'every project the running daemon serves')
    .addOption(
      portOption(
        "your daemon's port: only a daemon of yours listening there is asked (default: yours serving the project; with --all, else your newest)",
      ),
    )
    .option('--json', 'print JSON')
    .action(async (text: string | undefined, options: import('./commands/steer.js').SteerOptions) => {
      const { runSteer } = await import('./commands/steer.js');
      process.exitCode = await runSteer(file, text, options, {
        paths: pulsePaths(options.project ?? '.'),
      }).catch(fail);
    });

steerCommand('guide', 'guidance', 'may change the task’s direction');
steerCommand('constrain', 'constraints', 'may restrict, never widen, what agents may do');

program
  .command('focus')
  .description('hold external events until a time (45m, 1h30m, …); `off` ends it; no argument shows it')
  .argument('[duration]', '45m, 90s, 2h, 1h30m, 7d or a bare number of minutes (at most 7 days), or off')
  .option('-p, --project <dir>', 'project folder', '.')
  .addOption(daemonPort())
  .option('--json', 'print JSON')
  .action(
    async (duration: string | undefined, options: { project: string; port?: number; json?: boolean }) => {
      const { formatFocus, runFocus } = await import('./commands/focus.js');
      const result = await runFocus(pulsePaths(options.project), duration, { port: options.port }).catch(
        fail,
      );
      console.log(options.json ? JSON.stringify(result, null, 2) : formatFocus(result));
      if (result.warning && !options.json) console.warn(`warning: ${terminalText(result.warning)}`);
    },
  );

program
  .command('inspect')
  .description(
    "print the running daemon's actor events and state changes as they happen (needs pulse start --inspect)",
  )
  .option('-p, --project <dir>', 'project folder', '.')
  .addOption(daemonPort())
  .option(
    '--inspect-port <port>',
    "the inspector relay's port (default: the running daemon's, as your daemon record says)",
    parsePort,
  )
  .option('--json', 'print the raw inspection events, one JSON object a line')
  .action(async (options: { project: string; port?: number; inspectPort?: number; json?: boolean }) => {
    const { runInspect } = await import('./commands/inspect.js');
    await runInspect({
      paths: pulsePaths(options.project),
      port: options.port,
      inspectPort: options.inspectPort,
      json: options.json,
    }).catch(fail);
  });

program
  .command('setup')
  .description(
    "connect an agent: print its MCP server entry, hooks and instructions; --write merges them into the project's files",
  )
  .addArgument(new Argument('<agent>', 'the agent to connect').choices(SETUP_AGENTS))
  .option('-p, --project <dir>', 'project folder', '.')
  .addOption(portOption(`the port \`pulse start\` serves on (default ${DEFAULT_PORT})`))
  .option('--write', 'merge into the files (each changed file is backed up first; all or none)')
  .option('--force', "with --write, replace a 'pulse' entry of yours that points elsewhere (after a backup)")
  .addOption(
    new Option(
      '--hooks <transport>',
      "how hooks reach the daemon: http (Claude Code posts them itself), curl (a shell line), node (pulse hook), plugin (opencode's only way: pulse's plugin posts them); default http for claude, plugin for opencode, else curl when installed",
    ).choices(['http', 'curl', 'node', 'plugin']),
  )
  .option(
    '--autostart',
    "the agent's session-start hook starts the daemon (pulse start --detach) when none answers; claude, codex and copilot",
  )
  .option('--json', 'print JSON')
  .action(
    async (
      agent: SetupAgent,
      options: {
        project: string;
        port?: number;
        write?: boolean;
        force?: boolean;
        hooks?: 'http' | 'curl' | 'node' | 'plugin';
        autostart?: boolean;
        json?: boolean;
      },
    ) => {
      const { runSetup } = await import('./commands/setup.js');
      const { formatSetup } = await import('./commands/format-setup.js');
      const result = await runSetup({ agent, ...options }).catch(fail);
      console.log(options.json ? JSON.stringify(result, null, 2) : formatSetup(result));
      if (result.refused && options.write) process.exitCode = 1;
    },
  );

program
  .command('doctor')
  .description(
    "check that pulse works for this project: the daemon, each agent's entries, hooks and permissions, Codex trust and hook review, Gemini and Copilot folder trust, opencode's project config, git; each problem with its fix",
  )
  .option('-p, --project <dir>', 'project folder', '.')
  .addOption(portOption(`the port to expect when no daemon runs (default ${DEFAULT_PORT})`))
  .option('--json', 'print JSON')
  .action(async (options: { project: string; port?: number; json?: boolean }) => {
    const { formatDoctor, runDoctor } = await import('./commands/doctor.js');
    const report = await runDoctor(options).catch(fail);
    console.log(options.json ? JSON.stringify(report, null, 2) : formatDoctor(report));
    if (!report.ok) process.exitCode = 1;
  });

program
  .command('hook')
  .description("answer an agent's hook: reads its JSON on stdin, holds tool calls while a replan is pending")
  .argument('<agent>', HOOK_AGENTS.join(', '), (value: string) => {
    if (!isHookAgent(value)) throw new InvalidArgumentError(`Expected one of ${HOOK_AGENTS.join(', ')}.`);
    return value;
  })
  .option('--event <name>', "the agent's hook event (default: the input's hook_event_name)")
  .option(
    '-p, --project <dir>',
    "project folder (default: the nearest a daemon of yours serves, from the input's cwd up)",
  )
  .option('--autostart', 'start the daemon (pulse start --detach) when none answers, then answer')
  .option('--port <port>', 'with --autostart, the port to start it on', parsePort)
  .action(
    async (
      agent: HookAgent,
      options: { event?: string; project?: string; autostart?: boolean; port?: number },
    ) => {
      const { runHookProcess } = await import('./commands/hook.js');
      await runHookProcess({ agent, ...options });
    },
  );

const sources = program.command('sources').description('external MCP sources polled into the inbox');

sources
  .command('list')
  .description(
    'the servers (where, state) and sources (poller state, last poll, items seen, or why disabled), from the daemon or the file',
  )
  .option('-p, --project <dir>', 'project folder', '.')
  .addOption(daemonPort())
  .option('--json', 'print JSON')
  .action(async (options: { project: string; port?: number; json?: boolean }) => {
    const { formatSourceList, listSources } = await import('./commands/sources-list.js');
    const list = await listSources(pulsePaths(options.project), process.env, options.port).catch(fail);
    console.log(options.json ? JSON.stringify(list, null, 2) : formatSourceList(list));
  });

sources
  .command('test')
  .description(
    "poll one source once now, in the running daemon (else here, with this shell's environment), and print the items read; marks nothing seen",
  )
  .argument('<name>', 'the source name in .pulse/sources.json')
  .option('-p, --project <dir>', 'project folder', '.')
  .option('--raw', 'also print what the tool answered (bounded) and the keys found in it')
  .addOption(daemonPort())
  .option('--json', 'print JSON')
  .action(
    async (name: string, options: { project: string; port?: number; raw?: boolean; json?: boolean }) => {
      const { formatSourceTest, testSource } = await import('./commands/sources-test.js');
      // The server runs in a process group of its own, out of reach of the terminal's Ctrl-C: an
      // exit, unlike a signal's default action, ends that group too.
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
        process.on(signal, () => process.exit(128 + constants.signals[signal]));
      const result = await testSource(pulsePaths(options.project), name, {
        raw: options.raw ?? false,
        port: options.port,
      }).catch(fail);
      console.log(options.json ? JSON.stringify(result, null, 2) : formatSourceTest(result));
      if (!result.ok) process.exitCode = 1;
    },
  );

/**
 * An agent runs `pulse hook` on every tool call: valid hook arguments are answered without
 * commander. bin.cjs answers hooks before this module loads; this serves hooks an older
 * `pulse setup` pointed at cli.js, and Node versions that cannot require() an ES module.
 */
const answerHook = async (): Promise<void> => {
  if (process.argv[2] !== 'hook') return;
  const { parseHookArgs, runHookProcess } = await import('./commands/hook.js');
  const options = parseHookArgs(process.argv.slice(3));
  if (options !== null) await runHookProcess(options);
};

void answerHook().then(() => program.parseAsync());
