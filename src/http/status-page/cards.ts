import type { ReplanAck } from '../../../machines/replan-acks.js';
import { toolSummary } from '../../sources/client/tool-safety.js';
import { agentLabel } from '../../system/agent-label.js';
import { configErrorEffect, watchDownWarning } from '../../system/sentences.js';
import type { SystemStatus } from '../../system/system-status.js';
import type { ThinkerStatus } from '../../thinkers/thinker-in-force.js';
import { fleetCard, fleetReceipts } from './fleet-cards.js';
import { actorOf, stateLine } from './states.js';
import { type Child, chip, error, h, none, rows, table, time } from './view.js';

// The status page's cards, in page order, each with what it shows for one status. The server
// renders them into the first view (page.ts) and the browser script redraws them from every
// frame of the stream (client/main.ts): one model, so both show the same.

export interface Card {
  id: string;
  title: string;
  wide: boolean;
  /** The content of the card's body. */
  render: (status: SystemStatus) => Child;
  /** Whether the card asks for attention now. */
  alert?: (status: SystemStatus) => boolean;
}

const shortSession = (id: string) => id.slice(0, 8);

const agents = (s: SystemStatus): Child =>
  table(
    ['agent', 'client', 'session', 'connected', 'last check-in', 'delivery'],
    s.agents.map((a) => [
      a.agent ? h('span', { class: 'mono' }, a.agent) : none('not named'),
      a.client_name
        ? [a.client_name, ' ', h('span', { class: 'muted' }, a.client_version ?? '')]
        : none('unknown'),
      h('code', { title: a.session }, shortSession(a.session)),
      time(a.connected_at),
      time(a.last_request_at),
      a.holds_delivery ? h('span', { class: 'chip warn' }, `holds ${a.holds_delivery}`) : none('none'),
    ]),
    'No agent is connected over MCP. Agents connect to /mcp; a session closes after 30 min without a request.',
  );

const replan = (s: SystemStatus): Child => {
  const r = s.replan;
  const pending = r.pending_replan_event_id !== null;
  return [
    h(
      'p',
      { class: 'headline', id: 'replan-headline' },
      pending ? 'Replan pending: each agent must replan and acknowledge' : 'No replan pending',
    ),
    rows([
      ['state', stateLine(s, actorOf(s, 'replan'))],
      pending && ['event', h('code', { id: 'replan-event' }, r.pending_replan_event_id)],
      pending && [
        'files',
        h(
          'span',
          { id: 'replan-files' },
          r.pending_replan_files.map((file, i) => [i ? ', ' : '', h('code', {}, file)]),
        ),
      ],
      ['last ack', r.last_acknowledged_event_id ? h('code', {}, r.last_acknowledged_event_id) : none('none')],
    ]),
    owingAgents(r.agents ?? []),
  ];
};

/** Each agent that still owes its own ack, a line each: who it is, and the event. */
const owingAgents = (agents: SystemStatus['replan']['agents']): Child => {
  const owing = agents.filter((agent) => agent.owes !== null);
  if (owing.length === 0) return null;
  return h(
    'ul',
    { id: 'replan-owing' },
    owing.map((agent) => h('li', {}, [agent.label, ' owes ', h('code', {}, agent.owes)])),
  );
};

const fileName = (path: string) => path.split('/').at(-1) ?? path;

/** A unified diff as lines, each marked as added, removed or a hunk's header: text only. */
const diffView = (diff: string): Child =>
  h(
    'pre',
    { class: 'diff' },
    diff.split('\n').map((line) =>
      h(
        'span',
        {
          class: line.startsWith('@@')
            ? 'hunk'
            : line.startsWith('+') && !line.startsWith('+++')
              ? 'add'
              : line.startsWith('-') && !line.startsWith('---')
                ? 'del'
                : null,
        },
        `${line}\n`,
      ),
    ),
  );

/** One ack under its change: who, when, and what became of the plan (the diff folded away). */
const ackLine = (ack: ReplanAck): Child =>
  h(
    'li',
    { class: ack.plan_changed ? 'ack' : 'ack unchanged' },
    agentLabel(ack),
    ack.plan_changed
      ? [' acknowledged ', time(ack.at), ': ', ack.summary]
      : [' ', h('span', { class: 'chip warn' }, ack.summary), ' ', time(ack.at)],
    ack.diff && h('details', {}, h('summary', {}, 'the plan’s diff'), diffView(ack.diff)),
  );

/**
 * The latest guidance and constraints changes, newest first, each with who acknowledged it when
 * (and what became of the plan) and who still owes it.
 */
const history = (s: SystemStatus): Child => {
  const r = s.replan;
  if (r.changes.length === 0)
    return h('p', { class: 'muted' }, 'No guidance or constraints change logged yet.');
  return h(
    'ol',
    { class: 'history', id: 'history-list' },
    r.changes.map((change, index) => {
      const acks = r.acks.filter((ack) => ack.event_id === change.id).reverse();
      const owing = r.agents.filter((agent) => agent.owes === change.id);
      const later = index > 0;
      return h(
        'li',
        { 'data-event': change.id },
        h(
          'div',
          {},
          h('code', {}, fileName(change.path)),
          ` ${change.kind} `,
          time(change.timestamp),
          ' ',
          h('code', { class: 'muted' }, change.id),
        ),
        h(
          'ul',
          {},
          acks.map(ackLine),
          fleetReceipts(s, change.id),
          owing.map((agent) =>
            h(
              'li',
              { class: 'owing' },
              agent.label,
              ' still owes it',
              agent.owing_since && [' (held since ', time(agent.owing_since), ')'],
            ),
          ),
          acks.length === 0 &&
            owing.length === 0 &&
            h(
              'li',
              { class: 'muted' },
              r.pending_replan_event_id === change.id
                ? 'No agent is working: the next one to come owes it.'
                : later
                  ? 'No ack of its own: the agents acknowledged a later change.'
                  : 'No agent acknowledged it, and none owes it now: those working then have left.',
            ),
        ),
      );
    }),
  );
};

/** Who judges now; when that is not the configured thinker (or nobody is), which one is configured and why. */
const thinker = ({ configured, judging, reason }: ThinkerStatus): Child =>
  h(
    'span',
    { id: 'thinker' },
    judging ?? 'nobody',
    reason !== null && [
      h('span', { class: 'muted' }, ` (configured: ${configured})`),
      h('div', { class: judging === null ? 'error' : 'muted' }, reason),
    ],
  );

const delivery = (s: SystemStatus): Child => {
  const g = s.gate;
  const d = g.delivery;
  return [
    d === null
      ? h('p', { class: 'headline' }, 'No delivery out')
      : [
          h(
            'p',
            { class: 'headline' },
            d.holder === null ? 'Waiting for an agent to check in' : `Out to ${d.holder_label ?? d.holder}`,
          ),
          rows([
            ['delivery', h('code', {}, d.delivery_id)],
            ['lease ends', d.holder === null ? none('when claimed') : time(d.lease_expires_at)],
            [
              'events',
              h(
                'ul',
                { class: 'titles' },
                d.events.map((e) =>
                  h(
                    'li',
                    {},
                    h('span', { class: 'chip' }, e.source),
                    ' ',
                    e.title,
                    e.why && h('span', { class: 'muted' }, ` — ${e.why}`),
                    e.attempts > 1 && h('span', { class: 'muted' }, ` (attempt ${e.attempts})`),
                  ),
                ),
              ),
            ],
          ]),
        ],
    rows([
      ['gate', stateLine(s, actorOf(s, 'gate'))],
      [
        'so far',
        `${g.delivered} delivered, ${g.consumed_silently} consumed silently, ${g.put_back} put back`,
      ],
      ['thinker', thinker(g.thinker)],
      g.last_thought && [
        'last thought',
        [
          h('div', { class: 'muted' }, `by ${g.last_thought.by}`),
          h(
            'ul',
            { class: 'titles' },
            g.last_thought.events.map((e) =>
              h(
                'li',
                {},
                h('span', { class: 'chip' }, e.verdict === 'speak' ? 'deliver' : 'quiet'),
                ' ',
                e.title,
                e.why && h('span', { class: 'muted' }, ` — ${e.why}`),
              ),
            ),
          ),
        ],
      ],
      g.last_error && ['error', error(g.last_error)],
    ]),
  ];
};

const inbox = ({ inbox: i }: SystemStatus): Child => [
  h('p', { class: 'big' }, String(i.size), h('span', { class: 'muted' }, ` / ${i.capacity}`)),
  rows([
    ['out', `${i.out}${i.out ? ' with the gate' : ''}`],
    ['dropped', i.dropped ? h('span', { class: 'error' }, String(i.dropped)) : '0'],
    ['received', String(i.inserted)],
    i.last_error && ['error', error(i.last_error)],
  ]),
];

const actors = (s: SystemStatus): Child =>
  h(
    'ul',
    { class: 'actors' },
    s.actors.map((a) => h('li', {}, h('span', { class: 'mono' }, a.id), h('span', {}, stateLine(s, a)))),
  );

const log = (s: SystemStatus): Child =>
  rows([
    ['events', `${s.log.events} in events.jsonl`],
    ['latest', s.log.latest_event_id ? h('code', {}, s.log.latest_event_id) : none('none')],
    [
      'file watch',
      [
        s.watcher.down ? chip(s.watcher.state) : 'working',
        h(
          'div',
          { class: 'muted', id: 'watch-notices' },
          `${s.watcher.changes_seen} change ${s.watcher.changes_seen === 1 ? 'notice' : 'notices'} from the file system since the daemon started. One save often makes several (write, rename, attributes); each notice only asks the log to compare the files, and a file whose content changed becomes one event.`,
        ),
      ],
    ],
    s.log.last_error && ['error', error(s.log.last_error)],
    ...s.log.unobservable.map((u) => ['cannot see', error(`${u.file} ${u.reason}`)] as const),
    s.watcher.down
      ? ['watcher down', error(watchDownWarning(s.watcher.down, s.watcher.poll_every_sec))]
      : s.watcher.last_error && ['watcher error', error(`${s.watcher.last_error} (recovered)`)],
    ...s.log.warnings.map((w) => ['warning', error(w)] as const),
  ]);

const focus = ({ focus: f }: SystemStatus): Child => [
  h('p', { class: 'headline' }, f.until ? 'On: external events wait' : 'Off'),
  h(
    'p',
    { class: 'muted' },
    f.until
      ? ['Ends ', time(f.until), '; ', h('code', {}, 'pulse focus off'), ' ends it now.']
      : [h('code', {}, 'pulse focus 45m'), ' holds external events for 45 minutes.'],
  ),
  f.last_error && h('p', {}, error(`focus.json: ${f.last_error}`)),
];

const pollers = ({ sources: src }: SystemStatus): Child => [
  // Optional: a page served before trust existed keeps rendering.
  src.untrusted &&
    h('p', { class: 'error untrusted' }, [
      `${src.untrusted.refused} To trust it: `,
      h('code', {}, src.untrusted.command),
    ]),
  src.error &&
    h('p', { class: 'error' }, `sources.json: ${src.error} (${configErrorEffect(src.keeps_last_good)})`),
  src.warnings.map((w) => h('p', { class: 'error' }, w)),
  table(
    ['source', 'state', 'last poll', 'next poll', 'items', 'last error'],
    src.pollers.map((p) => [
      [
        h('span', { class: 'mono' }, p.source),
        h('div', { class: 'muted mono' }, `${p.server}.${p.tool}, every ${p.interval_sec} s`),
        p.tool_check !== null &&
          h(
            'div',
            { class: p.tool_check.verdict === 'undeclared' ? 'error tool' : 'muted tool' },
            p.tool_check.verdict === 'undeclared' ? p.tool_check.message : toolSummary(p.tool_check),
          ),
      ],
      chip(p.state),
      time(p.last_poll_at, 'never'),
      time(p.next_poll_at),
      String(p.items_seen),
      p.last_error
        ? [error(p.last_error), h('div', { class: 'muted' }, `${p.failures} failures`)]
        : none('none'),
    ]),
    src.untrusted
      ? 'No source runs: .pulse/sources.json is not trusted.'
      : 'No sources configured: add them to .pulse/sources.json.',
  ),
];

const dead = ({ gate: g }: SystemStatus): Child => [
  table(
    ['at', 'source', 'title', 'why'],
    [...g.dead_letters]
      .reverse()
      .map((d) => [
        time(d.at),
        h('span', { class: 'chip' }, d.source),
        d.title,
        d.reason === 'overflow' ? 'pushed out of a full inbox' : `${d.attempts} failed attempts`,
      ]),
    'None: no event was given up on.',
  ),
  g.dead_lettered > 0 &&
    h('p', { class: 'muted' }, `${g.dead_lettered} this run; all of them are in .pulse/dead-letters.jsonl`),
];

const events = (s: SystemStatus): Child =>
  table(
    ['id', 'file', 'kind', 'time'],
    s.recent_events.map((e) => [h('code', {}, e.id), h('code', {}, e.path), e.kind, time(e.timestamp)]),
    'No events logged yet.',
  );

/** The cards in page order. */
export const CARDS: readonly Card[] = [
  { id: 'agents', title: 'Connected agents', wide: true, render: agents },
  {
    id: 'replan',
    title: 'Replan',
    wide: false,
    render: replan,
    alert: (s) => s.replan.pending_replan_event_id !== null,
  },
  { id: 'delivery', title: 'Delivery to the agent', wide: false, render: delivery },
  { id: 'inbox', title: 'Inbox', wide: false, render: inbox },
  { id: 'history', title: 'Changes and acknowledgements', wide: true, render: history },
  { id: 'fleet', title: 'Fleet', wide: true, render: fleetCard },
  { id: 'actors', title: 'Actors', wide: true, render: actors },
  { id: 'log', title: 'Event log', wide: false, render: log },
  { id: 'focus', title: 'Focus', wide: false, render: focus },
  { id: 'pollers', title: 'Sources', wide: true, render: pollers },
  { id: 'events', title: 'Recent events', wide: true, render: events },
  { id: 'dead', title: 'Dead letters', wide: true, render: dead },
];
