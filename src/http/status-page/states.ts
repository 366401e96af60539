import type { StateValue } from 'xstate';
import type { ActorStatus, SystemStatus } from '../../system/system-status.js';
import { STATE_TEXT } from './machines.generated.js';
import { type Child, h, time } from './view.js';

// Each actor's state in words a user follows, from the status it is in; the internal state name
// stays beside it, small, for whoever debugs.

/** Every state path `value` is in, parents first: `{ready: {scan: 'idle'}}` → `ready`, `ready.scan`, `ready.scan.idle`. */
export const activePaths = (value: StateValue | null, prefix = ''): string[] => {
  if (value === null) return [];
  const join = (key: string) => (prefix ? `${prefix}.${key}` : key);
  if (typeof value === 'string') return [join(value)];
  return Object.entries(value).flatMap(([key, inner]) => [
    join(key),
    ...activePaths((inner ?? null) as StateValue | null, join(key)),
  ]);
};

/** The actor with system id `id`, or a stopped one when the system has none. */
export const actorOf = (s: SystemStatus, id: string): ActorStatus =>
  s.actors.find((a) => a.id === id) ?? { id, state: 'stopped', value: null };

/** The machine a system id runs: every `poller:<source>` runs the poller machine. */
export const machineOf = (actorId: string): string => (actorId.startsWith('poller:') ? 'poller' : actorId);

/** The first sentence of the machine's own description of the deepest state the actor is in. */
const described = (actor: ActorStatus): string => {
  const texts = STATE_TEXT[machineOf(actor.id) as keyof typeof STATE_TEXT] as
    | Record<string, string>
    | undefined;
  const deepest = activePaths(actor.value)
    .reverse()
    .find((path) => texts?.[path] !== undefined);
  if (deepest === undefined) return actor.state === 'stopped' ? 'Not running.' : actor.state;
  return /^[^.:]*[.:]?/.exec(texts![deepest]!)![0].replace(/:$/, '.');
};

const code = (text: string) => h('code', {}, text);
const plural = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;
const fileName = (path: string) => path.split('/').at(-1) ?? path;

const replanSentence = (s: SystemStatus): Child => {
  const r = s.replan;
  if (r.state === 'pending' && r.pending_replan_event_id !== null) {
    const logged = s.recent_events.find((e) => e.id === r.pending_replan_event_id);
    const owing = (r.agents ?? []).filter((agent) => agent.owes !== null).length;
    return [
      owing > 1
        ? `Waiting for ${owing} agents, each to acknowledge `
        : 'Waiting for the agent to acknowledge ',
      code(r.pending_replan_event_id),
      ' (',
      r.pending_replan_files.map(fileName).join(', ') || 'a file',
      ' changed',
      logged ? [' ', time(logged.timestamp)] : '',
      ').',
    ];
  }
  if (r.state === 'acknowledged')
    return [
      (r.agents ?? []).length > 1
        ? 'Up to date: every agent acknowledged '
        : 'Up to date: the agent acknowledged ',
      code(r.last_acknowledged_event_id ?? '?'),
      '.',
    ];
  if (r.state === 'idle') return 'Nothing to replan: guidance and constraints have not changed.';
  return 'Loading the event log.';
};

const gateSentence = (s: SystemStatus): Child => {
  const g = s.gate;
  const d = g.delivery;
  switch (g.state) {
    case 'idle':
      return s.inbox.size === 0
        ? 'Nothing to deliver: the inbox is empty.'
        : `Holding ${plural(s.inbox.size, 'event')} until the next reflection.`;
    case 'offered':
      return `${plural(d?.events.length ?? 0, 'urgent event')} set aside: the first agent to check in gets them.`;
    case 'awaiting':
      return [
        `Out to ${d?.holder_label ?? d?.holder ?? 'an agent'}: waiting for its acknowledgement`,
        d?.lease_expires_at ? [' (lease ends ', time(d.lease_expires_at), ')'] : '',
        '.',
      ];
    case 'thinking':
      return `The thinker is judging ${plural(s.inbox.out, 'event')}.`;
    case 'cooldown':
      return 'A delivery was just acknowledged: pausing before the next one.';
    case 'backingOff':
      return `A thought failed (${g.failed_in_a_row} in a row): waiting before asking the thinker again.`;
    default:
      return null;
  }
};

const logSentence = (s: SystemStatus, actor: ActorStatus): Child => {
  if (s.log.state === 'failed') return `Cannot load the journal: ${s.log.last_error ?? 'unknown error'}`;
  const paths = activePaths(actor.value);
  if (!paths.includes('ready')) return null;
  const scan = paths.includes('ready.scan.idle')
    ? `Up to date with the files: ${plural(s.log.events, 'event')} logged.`
    : paths.includes('ready.scan.debouncing')
      ? 'A file changed: waiting a moment so one save becomes one event.'
      : 'Comparing the files with the log.';
  return paths.includes('ready.ack.idle') ? scan : [scan, ' Writing an acknowledgement to state.json.'];
};

const pollerSentence = (s: SystemStatus, actor: ActorStatus): Child => {
  const p = s.sources.pollers.find((poller) => `poller:${poller.source}` === actor.id);
  if (p === undefined) return null;
  switch (p.state) {
    case 'waiting':
      return ['Waiting: next poll ', time(p.next_poll_at), `; ${plural(p.items_seen, 'item')} seen so far.`];
    case 'polling':
      return `Calling ${p.server}.${p.tool}.`;
    case 'offering':
      return 'Handing what it listed to the inbox.';
    case 'catchingUp':
      return 'The last poll hit the cap: polling again soon.';
    case 'backingOff':
      return [`Failing (${plural(p.failures, 'failure')}): tries again `, time(p.next_poll_at), '.'];
    default:
      return null;
  }
};

const SENTENCES: Record<string, (s: SystemStatus, actor: ActorStatus) => Child> = {
  replan: replanSentence,
  gate: gateSentence,
  log: logSentence,
  inbox: (s) =>
    s.inbox.size === 0
      ? 'Empty.'
      : `${plural(s.inbox.size, 'event')} not yet dealt with${s.inbox.out ? `, ${s.inbox.out} of them out with the gate` : ''}.`,
  watcher: (s) =>
    s.watcher.down
      ? `The watch failed (${s.watcher.down}): polling .pulse/ every second.`
      : 'Watching .pulse/ and the project root for edits.',
  focus: (s) =>
    s.focus.until ? ['Focus on until ', time(s.focus.until), ': external events wait.'] : 'Focus off.',
  sources: (s) =>
    s.sources.error
      ? `sources.json has an error: ${s.sources.error}`
      : `${plural(s.sources.pollers.filter((p) => p.disabled_reason === null).length, 'source')} running.`,
};

/** What `actor` is doing, in words; the machine's own description of its state when nothing better is known. */
export const stateSentence = (s: SystemStatus, actor: ActorStatus): Child =>
  (actor.state !== 'stopped' &&
    (actor.id.startsWith('poller:') ? pollerSentence : SENTENCES[actor.id])?.(s, actor)) ||
  described(actor);

/** The sentence with the internal state name after it, small and muted. */
export const stateLine = (s: SystemStatus, actor: ActorStatus): Child => [
  h('span', { class: 'says' }, stateSentence(s, actor)),
  ' ',
  h('span', { class: 'internal', title: 'the state value inside the actor' }, actor.state),
];
