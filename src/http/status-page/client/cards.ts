import type { SystemStatus } from '../../../system/system-status.js';
import type { CardId } from '../cards.js';
import { type Child, chip, error, h, none, rows, table, time } from './dom.js';

/** What a card shows for one status: the content of its body; `card` is its section. */
type CardRenderer = (status: SystemStatus, card: HTMLElement) => Child;

const replan: CardRenderer = ({ replan: r }, card) => {
  const pending = r.pending_replan_event_id !== null;
  card.classList.toggle('alert', pending);
  return [
    h(
      'p',
      { class: 'headline', id: 'replan-headline' },
      pending ? 'Replan pending: the agent must replan and acknowledge' : 'No replan pending',
    ),
    rows([
      ['state', chip(r.state)],
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
  ];
};

const delivery: CardRenderer = ({ gate: g }) => {
  const d = g.delivery;
  return [
    d === null
      ? h('p', { class: 'headline' }, 'No delivery out')
      : [
          h(
            'p',
            { class: 'headline' },
            d.holder === null ? 'Waiting for an agent to check in' : `Out to ${d.holder}`,
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
      ['gate', chip(g.state)],
      [
        'so far',
        `${g.delivered} delivered, ${g.consumed_silently} consumed silently, ${g.put_back} put back`,
      ],
      g.last_thought && [
        'thinker',
        [g.last_thought.by, g.last_thought.note && h('div', { class: 'error' }, g.last_thought.note)],
      ],
      g.last_thought && [
        'last thought',
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
      g.failed_in_a_row > 0 && ['backing off', error(`${g.failed_in_a_row} failed thoughts in a row`)],
      g.last_error && ['error', error(g.last_error)],
    ]),
  ];
};

const inbox: CardRenderer = ({ inbox: i }) => [
  h('p', { class: 'big' }, String(i.size), h('span', { class: 'muted' }, ` / ${i.capacity}`)),
  rows([
    ['out', `${i.out}${i.out ? ' with the gate' : ''}`],
    ['dropped', i.dropped ? h('span', { class: 'error' }, String(i.dropped)) : '0'],
    ['received', String(i.inserted)],
    i.last_error && ['error', error(i.last_error)],
  ]),
];

const actors: CardRenderer = (s) =>
  h(
    'ul',
    { class: 'actors' },
    s.actors.map((a) => h('li', {}, h('span', { class: 'mono' }, a.id), h('span', {}, chip(a.state)))),
  );

const log: CardRenderer = (s) =>
  rows([
    ['events', String(s.log.events)],
    ['latest', s.log.latest_event_id ? h('code', {}, s.log.latest_event_id) : none('none')],
    ['watcher', [chip(s.watcher.state), ` ${s.watcher.changes_seen} changes seen`]],
    s.log.last_error && ['error', error(s.log.last_error)],
    ...s.log.unobservable.map((u) => ['cannot see', error(`${u.file} ${u.reason}`)] as const),
    s.watcher.down
      ? [
          'watcher down',
          error(`${s.watcher.down}: .pulse/ is polled every second until the watch works again`),
        ]
      : s.watcher.last_error && ['watcher error', error(`${s.watcher.last_error} (recovered)`)],
    ...s.log.warnings.map((w) => ['warning', error(w)] as const),
  ]);

const focus: CardRenderer = ({ focus: f }) => [
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

const pollers: CardRenderer = ({ sources: src }) => [
  src.error &&
    h(
      'p',
      { class: 'error' },
      `sources.json: ${src.error} (${src.keeps_last_good ? 'the last good config keeps running' : 'no source runs until it is fixed'})`,
    ),
  src.warnings.map((w) => h('p', { class: 'error' }, w)),
  table(
    ['source', 'state', 'last poll', 'next poll', 'items', 'last error'],
    src.pollers.map((p) => [
      [
        h('span', { class: 'mono' }, p.source),
        h('div', { class: 'muted mono' }, `${p.server}.${p.tool}, every ${p.interval_sec} s`),
      ],
      chip(p.state),
      time(p.last_poll_at, 'never'),
      time(p.next_poll_at),
      String(p.items_seen),
      p.last_error
        ? [error(p.last_error), h('div', { class: 'muted' }, `${p.failures} failures`)]
        : none('none'),
    ]),
    'No sources configured: add them to .pulse/sources.json.',
  ),
];

const dead: CardRenderer = ({ gate: g }) => [
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

const events: CardRenderer = (s) =>
  table(
    ['id', 'file', 'kind', 'time'],
    s.recent_events.map((e) => [h('code', {}, e.id), h('code', {}, e.path), e.kind, time(e.timestamp)]),
    'No events logged yet.',
  );

/** Each card's renderer, by card id: a card without one does not compile. */
export const RENDERERS: Record<CardId, CardRenderer> = {
  replan,
  delivery,
  inbox,
  actors,
  log,
  focus,
  pollers,
  events,
  dead,
};
