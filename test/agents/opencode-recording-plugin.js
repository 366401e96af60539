// A recording opencode plugin for the agent suite (copied into a test project's .opencode/plugins/):
// it appends every hook call's input and output, JSON-serialised, to $PULSE_OPENCODE_RECORD/<hook>.jsonl
// and acts as $PULSE_OPENCODE_RECORD/answers.json says (throw, add context, send a prompt).
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

const DIR = process.env.PULSE_OPENCODE_RECORD;

/** The plugin hooks opencode 1.18.33 triggers (found in the binary), besides `event`. */
const HOOKS = [
  'config',
  'chat.message',
  'chat.params',
  'chat.headers',
  'experimental.chat.system.transform',
  'experimental.chat.messages.transform',
  'experimental.text.complete',
  'experimental.session.compacting',
  'experimental.compaction.autocontinue',
  'command.execute.before',
  'tool.definition',
  'tool.execute.before',
  'tool.execute.after',
  'shell.env',
  'permission.ask',
];

/** JSON text of anything a hook gets: cycles, functions and bigints written as words. */
const serialise = (value) => {
  const seen = new WeakSet();
  return JSON.stringify(value, (_key, item) => {
    if (typeof item === 'function') return '[function]';
    if (typeof item === 'bigint') return String(item);
    if (typeof item === 'object' && item !== null) {
      if (seen.has(item)) return '[circular]';
      seen.add(item);
    }
    return item;
  });
};

const record = (name, value) => appendFileSync(`${DIR}/${name}.jsonl`, `${serialise(value)}\n`);

const answers = () =>
  existsSync(`${DIR}/answers.json`) ? JSON.parse(readFileSync(`${DIR}/answers.json`, 'utf8')) : {};

const counts = {};

/** Sends `text` as the user's next message in the session, without waiting for its turn; records the outcome. */
const sendPrompt = (context, sessionID, text) =>
  context.client.session
    .prompt({ path: { id: sessionID }, body: { parts: [{ type: 'text', text }] } })
    .then((result) =>
      record('prompt-sent', { error: result.error ?? null, answered: result.data !== undefined }),
    );

/** One hook: record the call, then apply each answer meant for this call (its `nth`, its `tool`). */
const hook = (name, context) => async (input, output) => {
  counts[name] = (counts[name] ?? 0) + 1;
  record(name, { input, output });
  for (const answer of answers()[name] ?? []) {
    if (answer.nth !== undefined && answer.nth !== counts[name]) continue;
    if (answer.tool !== undefined && input?.tool !== answer.tool) continue;
    if (answer.system !== undefined) output.system.push(answer.system);
    if (answer.appendOutput !== undefined) output.output += answer.appendOutput;
    if (answer.part !== undefined) {
      const first = output.parts[0];
      output.parts.push({ ...first, id: `${first.id}z`, text: answer.part, synthetic: true });
    }
    if (answer.prompt !== undefined) void sendPrompt(context, input.sessionID, answer.prompt);
    if (answer.throw !== undefined) throw new Error(answer.throw);
  }
};

export const PulseRecorder = async (context) => {
  record('init', {
    keys: Object.keys(context).sort(),
    directory: context.directory,
    worktree: context.worktree,
    project: context.project,
  });
  let prompts = 0;
  return {
    event: async ({ event }) => {
      record('event', event);
      const idle = answers().event;
      if (idle?.idlePrompt === undefined || event.type !== 'session.idle') return;
      if (prompts >= (idle.times ?? 1)) return;
      prompts += 1;
      await sendPrompt(context, event.properties.sessionID, idle.idlePrompt);
    },
    ...Object.fromEntries(HOOKS.map((name) => [name, hook(name, context)])),
  };
};
