import { count, markdownTable, ms, type RunInfo, ratio, runLines, verdict } from '../lib/format.js';
import type { HookRow, HooksPlan, HooksResult } from './measure.js';
import { HOOK_ROWS } from './measure.js';

/** A hook the agent runs per tool call may cost at most this share of `node -e 0` (p50 over p50). */
export const TARGETS = { ratioToNode: 0.25 };

/** The rows judged against the target: the hooks `pulse setup` writes by default. */
const JUDGED: readonly HookRow[] = [
  'claude-http',
  'opencode-plugin',
  'codex-curl',
  'cursor-curl',
  'gemini-curl',
  'copilot-curl',
];

export interface HooksReport extends RunInfo {
  plan: HooksPlan;
  result: HooksResult;
}

const label = (row: HookRow, { programs }: HooksResult): string =>
  ({
    node: "`node -e 0`: the floor of any Node process (every ratio's denominator)",
    bash: "`bash -c true`: Codex's and Copilot's shell, running nothing",
    sh: `\`sh -c true\` (${programs.sh.replace(/^.*\//, '')} here): the shell taken for Cursor, running nothing`,
    curl: "`curl --version`: curl's own start, no request",
    'claude-http': 'Claude Code, http: one POST to the daemon, no process',
    'opencode-plugin': "opencode, plugin: pulse's `tool.execute.before`, one fetch to the daemon, no process",
    'codex-curl': 'Codex, curl: `bash -c` the PreToolUse line',
    'cursor-curl': 'Cursor, curl: `sh -c` the beforeShellExecution line',
    'gemini-curl': 'Gemini CLI, curl: `bash -c` the BeforeTool line',
    'copilot-curl': 'Copilot CLI, curl: `bash -c` the preToolUse line',
    'codex-node': 'node fallback: `bash -c` `node bin.cjs hook codex --event PreToolUse`',
  })[row];

/** Each row's p50 over `node -e 0`'s. */
const ratioOf = ({ times }: HooksResult, row: HookRow) => times[row].p50 / times.node.p50;

const isMet = (result: HooksResult, row: HookRow) => ratioOf(result, row) <= TARGETS.ratioToNode;

const targetCells = (result: HooksResult, row: HookRow): [string, string] => {
  if (JUDGED.includes(row))
    return [`≤ ${ratio(TARGETS.ratioToNode)} \`node -e 0\``, verdict(isMet(result, row))];
  if (row === 'codex-node') return ['none: a Node process, so ≥ 1× by its nature', '—'];
  return ['', ''];
};

export const formatTable = ({ result }: HooksReport): string =>
  markdownTable(
    ['hook, as the agent runs it', 'p50', 'p99', 'mean', "p50 ÷ `node -e 0`'s p50", 'target', 'result'],
    HOOK_ROWS.map((row) => {
      const { p50, p99, mean } = result.times[row];
      return [
        label(row, result),
        ms(p50),
        ms(p99),
        ms(mean),
        ratio(ratioOf(result, row)),
        ...targetCells(result, row),
      ];
    }),
  );

export const missedTargets = ({ result }: HooksReport): string[] =>
  JUDGED.filter((row) => !isMet(result, row)).map(
    (row) => `${row} p50 ${ms(result.times[row].p50)} is ${ratio(ratioOf(result, row))} node -e 0`,
  );

/** `fn (file)` for a profile row: the function and where it lives in dist/. */
const functionName = (name: string) => {
  const [fn, file] = name.split(' ');
  return `\`${fn}\`${file ? ` (\`${file.replace(/^dist\//, '').replace(/:\d+$/, '')}\`)` : ''}`;
};

const profileTable = ({ result }: HooksReport): string => {
  const { profile } = result;
  const share = (x: number) => `${((x / profile.totalMs) * 100).toFixed(0)} %`;
  return markdownTable(
    ["where the node fallback's profiled run spent its time", 'ms', 'share'],
    [
      ...profile.places.slice(0, 4).map((p) => [`self: ${p.name}`, ms(p.ms), share(p.ms)]),
      ...profile.inclusive
        .slice(0, 4)
        .map((f) => [`inclusive: ${functionName(f.name)}`, ms(f.ms), share(f.ms)]),
    ],
  );
};

/** What each row costs, from this run's figures: the shell's part, curl's, the daemon's, Node's. */
const reading = ({ result }: HooksReport): string => {
  const t = (row: HookRow) => result.times[row].p50;
  const selfOf = (place: string) => result.profile.places.find((p) => p.name === place)?.ms ?? 0;
  const profiled = result.profile.totalMs;
  const pct = (x: number) => `${((x / profiled) * 100).toFixed(0)} %`;
  const curlParts = (
    row: 'codex-curl' | 'cursor-curl' | 'gemini-curl' | 'copilot-curl',
    shell: 'bash' | 'sh',
  ) =>
    `Of it, ${ms(t(shell))} is the shell (\`${shell} -c true\`) and the other ${ms(t(row) - t(shell))} curl: its start (\`curl --version\` alone takes ${ms(t('curl'))}, a process start from the bench included, as in every command row), the subshell the shell forks for \`$(curl …)\`, and the request (${ms(t('claude-http'))} alone, the http row); \`printf\` is a builtin.`;
  return `Every figure is wall time in the bench process; for a command, from \`spawn()\` to the child's exit with its output read, so each command row includes starting a process from Node (fork, exec, three pipes), which \`sh -c true\` shows at its smallest. The floors split the command hooks into their parts. In this run (p50s):

- **Claude Code, http: ${ms(t('claude-http'))}, ${ratio(ratioOf(result, 'claude-http'))}.** No process at all: a TCP connection to 127.0.0.1, the hook JSON posted, the daemon's answer (\`POST /hook\`: reconcile with the files, decide, format the refusal), the connection closed. Claude Code makes this request from its own running process, so this is the whole cost of a hook to it.
- **opencode, plugin: ${ms(t('opencode-plugin'))}, ${ratio(ratioOf(result, 'opencode-plugin'))}.** No process either: pulse's plugin, loaded from the file setup wrote, runs its \`tool.execute.before\` in opencode's own process; one \`fetch\` to the daemon, whose hold it throws. Here it runs on Node's \`fetch\` (opencode runs it on Bun's).
- **Codex, curl: ${ms(t('codex-curl'))}, ${ratio(ratioOf(result, 'codex-curl'))}.** ${curlParts('codex-curl', 'bash')} The line's fail-open branch runs only when curl fails.
- **Cursor, curl: ${ms(t('cursor-curl'))}, ${ratio(ratioOf(result, 'cursor-curl'))}.** The same curl through \`sh -c\`, assumed to be how Cursor runs a hook command (it runs them through a shell; which one is not documented). Here \`/bin/sh\` is \`${result.programs.sh}\`; on macOS it is bash, so there this row costs about what the Codex row does. ${curlParts('cursor-curl', 'sh')}
- **Gemini CLI, curl: ${ms(t('gemini-curl'))}, ${ratio(ratioOf(result, 'gemini-curl'))}.** The same curl through \`bash -c\`, as Gemini CLI 0.61 runs every hook command (seen with the real CLI); it differs from the Codex row only in its route and in the answer it prints. ${curlParts('gemini-curl', 'bash')}
- **Copilot CLI, curl: ${ms(t('copilot-curl'))}, ${ratio(ratioOf(result, 'copilot-curl'))}.** The Codex line with Copilot's route and fail-open answer, through \`bash -c\` as Copilot 1.0.102 runs it. ${curlParts('copilot-curl', 'bash')}
- **node fallback: ${ms(t('codex-node'))}, ${ratio(ratioOf(result, 'codex-node'))}.** \`--hooks node\`, for machines without curl or a POSIX shell, starts Node, so it can never come near 0.25×: its floor is \`node -e 0\` (${ms(t('node'))}) plus the shell (${ms(t('bash'))}). pulse's part is the rest, ${ms(t('codex-node') - t('node') - t('bash'))}: \`dist/bundle/bin.cjs\`, the hook's modules bundled into one CommonJS file (which skips starting Node's ESM loader) with \`node:http\`, reads stdin and \`.pulse/daemon.json\` synchronously, asks the daemon once and writes the answer. In its profiled run (${ms(profiled)} sampled every 100 µs, ${result.profiledFiles} project files caught running code), Node's bootstrap and module loader ("node internals") took ${pct(selfOf('node internals'))}, compiling and the runtime's own start ("(native / V8)") ${pct(selfOf('(native / V8)'))}, pulse's own code (the bundle) ${pct(selfOf('bundle/') + selfOf('src/'))}; the inclusive rows are pulse's functions with all they call (the round trip is inside \`runHook\`).

curl's own start is the largest part of a curl hook, and it is not curl's work but loading it.
Measured once by hand on this machine (2026-12-01), \`perf record -e cpu-clock\` of 50
\`curl --version\` runs (curl 7.88.1 of Debian 12, linked against 31 shared libraries: OpenSSL,
GnuTLS, LDAP, SSH, RTMP, Kerberos, …): 48 % of curl's samples were in the kernel (exec, mapping
those libraries, page faults), 37 % in the dynamic loader relocating them, 5 % in libc and 4 %
in OpenSSL's initialisation; curl itself and libcurl, under 1 %. A curl with fewer libraries
starts faster; it is the user's curl.
The daemon's part of the request, reading the files' state and deciding, is in the http row.

Absolute times move with the load average (other sessions share these cores, and a hook's wall
time is mostly waiting for one); the ratios, measured side by side in one run, move much less.`;
};

export const formatSection = (report: HooksReport): string => {
  const { plan, result } = report;
  return `## Hooks: each agent's hook per tool call, beside \`node -e 0\`

The agent runs a hook before every tool call and waits for it, so its cost is added to each
call. \`pulse setup\` writes, per agent, the cheapest way to reach the daemon's
\`POST /hook/<agent>/<event>\`: Claude Code posts the hook JSON itself (\`--hooks http\`), opencode runs
pulse's plugin, which posts it from opencode's process, Codex, Cursor, Gemini CLI and Copilot CLI run a one-line \`curl\` through a shell (\`--hooks curl\`); \`--hooks node\` runs
\`pulse hook\` where there is no curl. Target: a command hook's p50 at most
${ratio(TARGETS.ratioToNode)} of \`node -e 0\`'s, the start of an empty Node process, measured side
by side; Claude Code's HTTP hook is held to the same bar.

${runLines(report)}
- Programs: ${result.programs.bash} (\`/bin/bash\`), \`/bin/sh\` → \`${result.programs.sh}\`, ${result.programs.curl}
- Setup: one daemon (\`pulse start --port 0 --log-level warn\`) on a fresh temp project; the built CLI's \`pulse setup claude --write\`, \`pulse setup opencode --write\`, \`pulse setup codex --write\`, \`pulse setup cursor --write\`, \`pulse setup gemini --write\` and \`pulse setup copilot --write\` (their defaults: http, plugin, curl, curl, curl, curl) for that port, and \`pulse setup codex --write --hooks node\` in a second folder; each row's hook is read back from the file setup wrote (\`.claude/settings.local.json\`, \`.opencode/plugins/pulse.js\`, \`.codex/hooks.json\`, \`.cursor/hooks.json\`, \`.gemini/settings.json\`, \`.github/hooks/pulse.json\`). Then guidance.md is edited so a replan is pending, and every hook run must answer with a refusal naming that event (\`permissionDecision: "deny"\`, Cursor's \`permission: "deny"\`, Gemini's \`decision: "deny"\`, the plugin's throw) or the run fails: a fast wrong answer is not a result.
- Inputs: each agent's JSON for the same shell call, \`touch src-file\`, so the daemon does the same work for each: Codex's captured from Codex 0.171 (\`test/fixtures/hooks/codex-0.171.0/PreToolUse-Bash.json\`, its \`/PROJECT\` replaced), opencode's \`tool.execute.before\` arguments captured from opencode 1.18.33 (\`test/fixtures/hooks/opencode-1.18.33/tool.execute.before-bash.json\`, its command replaced), Gemini's captured from Gemini CLI 0.61 (\`test/fixtures/hooks/gemini-0.61.0/BeforeTool-run_shell_command.json\`, the same replaced and its command made \`touch src-file\`), Claude Code's PreToolUse and Cursor's beforeShellExecution in their documented shapes, Copilot's preToolUse in the shape Copilot 1.0.102 sends (\`toolName: "bash"\`, \`toolArgs\` an object).
- How each runs: Claude's as one \`node:http\` POST from the bench process to the handler's \`url\` with its headers, a fresh connection per call (\`agent: false\`); opencode's as its plugin hook called in the bench process with those arguments; Codex's as Codex runs hook commands, \`/bin/bash -c '<command>'\` (seen with the real Codex 0.171), the JSON on stdin, in the project folder; Cursor's through \`/bin/sh -c\` (an assumption: Cursor runs hook commands through a shell); Gemini's as Gemini CLI runs them, \`bash -c\` (seen with the real CLI 0.61); Copilot's through \`/bin/bash -c\` (seen with the real Copilot 1.0.102); the node fallback's through \`/bin/bash -c\` as Codex would run it.
- Runs: ${plan.warmup} warm-up rounds, then ${count(plan.runs)} rounds of one run of each row, which goes first rotating round by round.
- Profile: one more node-fallback run under \`node --cpu-prof --cpu-prof-interval 100\`, the same input.

${formatTable(report)}

The Codex PreToolUse command measured, as setup writes it into \`.codex/hooks.json\` (shown for a project at \`/home/me/app\` on the default port; Cursor's and Copilot's differ only in their route and in the answer they print when the daemon cannot be asked; Copilot's file names it \`bash\`):

\`\`\`json
"command": ${JSON.stringify(result.codexCommand)}
\`\`\`

${profileTable(report)}

### How to read this

${reading(report)}
`;
};
