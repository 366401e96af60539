import { createHash } from 'node:crypto';
import { basename } from 'node:path';

// One self-contained document: no build step and nothing fetched but the stream, so it works
// offline. The script renders with DOM nodes and text only (titles come from sources and are
// untrusted), and the CSP allows exactly this style and this script by hash.

const STYLE = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --ink: #1c2127; --muted: #667085; --line: #e3e6ea;
  --ok: #137333; --ok-bg: #e6f4ea; --warn: #8a5300; --warn-bg: #fff4e0; --bad: #b42318; --bad-bg: #fdecea; --accent: #1f5fbf; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171b; --card: #1d2126; --ink: #e6e8eb; --muted: #98a2b3; --line: #2d333b;
    --ok: #7ee2a0; --ok-bg: #173a24; --warn: #ffd08a; --warn-bg: #3d2d12; --bad: #ffaba3; --bad-bg: #45201c; --accent: #8ab4f8; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; padding: 14px 24px; border-bottom: 1px solid var(--line); background: var(--card); }
h1 { margin: 0; font-size: 18px; }
h2 { margin: 0 0 8px; font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.project { margin: 0; color: var(--muted); font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; overflow-wrap: anywhere; }
#conn { margin: 0 0 0 auto; padding: 2px 10px; border-radius: 999px; font-weight: 600; font-size: 12px; background: var(--warn-bg); color: var(--warn); }
#conn[data-state="live"] { background: var(--ok-bg); color: var(--ok); }
#conn[data-state="down"] { background: var(--bad-bg); color: var(--bad); }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 14px; padding: 16px 24px; max-width: 1280px; }
body.stale main { opacity: .55; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; min-width: 0; }
.wide { grid-column: 1 / -1; }
.card.alert { border-color: var(--warn); box-shadow: inset 4px 0 0 var(--warn); }
.headline { margin: 0 0 8px; font-size: 17px; font-weight: 600; }
.alert .headline { color: var(--warn); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; margin: 0; }
dt { color: var(--muted); }
dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
code, .mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.chip { display: inline-block; padding: 0 7px; border-radius: 4px; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; background: var(--line); overflow-wrap: anywhere; }
.chip.ok { background: var(--ok-bg); color: var(--ok); }
.chip.warn { background: var(--warn-bg); color: var(--warn); }
.chip.bad { background: var(--bad-bg); color: var(--bad); }
.actors { list-style: none; margin: 0; padding: 0; display: grid; grid-template-columns: max-content 1fr; gap: 3px 12px; }
.actors li { display: contents; }
ul.titles { margin: 4px 0 0; padding-left: 18px; }
.big { font-size: 22px; font-weight: 600; }
.muted { color: var(--muted); }
.error { color: var(--bad); overflow-wrap: anywhere; }
table { width: 100%; border-collapse: collapse; }
th { text-align: left; font-weight: 600; color: var(--muted); font-size: 12px; border-bottom: 1px solid var(--line); padding: 3px 8px 3px 0; }
td { border-bottom: 1px solid var(--line); padding: 4px 8px 4px 0; vertical-align: top; overflow-wrap: break-word; }
td code, td .mono { overflow-wrap: anywhere; }
tr:last-child td { border-bottom: none; }
time { text-decoration: underline dotted var(--muted); cursor: help; }
footer { padding: 0 24px 20px; color: var(--muted); font-size: 12px; }
footer a { color: var(--accent); }
`;

const SCRIPT = `
'use strict';
const $ = (id) => document.getElementById(id);
// Every value reaches the page as a text node or an attribute value, never as markup.
const h = (tag, attributes, ...children) => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
};
const relative = (iso) => {
  const ms = Date.parse(iso) - Date.now();
  const s = Math.abs(ms) / 1000;
  if (s < 1) return 'now';
  const text = s < 60 ? Math.floor(s) + ' s' : s < 3600 ? Math.floor(s / 60) + ' min'
    : s < 172800 ? Math.floor(s / 3600) + ' h' : Math.floor(s / 86400) + ' d';
  return ms > 0 ? 'in ' + text : text + ' ago';
};
const time = (iso, none) =>
  iso ? h('time', { datetime: iso, title: iso, 'data-at': iso }, relative(iso)) : h('span', { class: 'muted' }, none || '–');
const tone = (state) =>
  /fail|backingOff|stopped/i.test(state) ? 'bad' : /pending|awaiting|offered|catchingUp/.test(state) ? 'warn'
    : /disabled|loading|starting/.test(state) ? '' : 'ok';
const chip = (state) => h('span', { class: 'chip ' + tone(state) }, state);
const none = (text) => h('span', { class: 'muted' }, text);
const error = (text) => text && h('span', { class: 'error' }, text);
const rows = (pairs) => h('dl', {}, pairs.filter(Boolean).map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
const table = (headings, body, empty) =>
  body.length === 0 ? h('p', { class: 'muted' }, empty)
    : h('table', {}, h('thead', {}, h('tr', {}, headings.map((t) => h('th', {}, t)))),
        h('tbody', {}, body.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))));
const fill = (id, ...nodes) => $(id).replaceChildren(...nodes.flat().filter(Boolean));

const renderReplan = (r) => {
  const pending = r.pending_replan_event_id !== null;
  $('replan').classList.toggle('alert', pending);
  fill('replan-body',
    h('p', { class: 'headline', id: 'replan-headline' }, pending ? 'Replan pending: the agent must replan and acknowledge' : 'No replan pending'),
    rows([
      ['state', chip(r.state)],
      pending && ['event', h('code', { id: 'replan-event' }, r.pending_replan_event_id)],
      pending && ['files', h('span', { id: 'replan-files' }, r.pending_replan_files.map((f, i) => [i ? ', ' : '', h('code', {}, f)]))],
      ['last ack', r.last_acknowledged_event_id ? h('code', {}, r.last_acknowledged_event_id) : none('none')],
    ]));
};
const renderActors = (s) =>
  fill('actors-body', h('ul', { class: 'actors' }, s.actors.map((a) => h('li', {}, h('span', { class: 'mono' }, a.id), h('span', {}, chip(a.state))))));
const renderInbox = (i) =>
  fill('inbox-body',
    h('p', { class: 'big' }, String(i.size), h('span', { class: 'muted' }, ' / ' + i.capacity)),
    rows([
      ['out', i.out + (i.out ? ' with the gate' : '')],
      ['dropped', i.dropped ? h('span', { class: 'error' }, String(i.dropped)) : '0'],
      ['received', String(i.inserted)],
      i.last_error && ['error', error(i.last_error)],
    ]));
const renderDelivery = (g) => {
  const d = g.delivery;
  fill('delivery-body',
    d === null ? h('p', { class: 'headline' }, 'No delivery out') : [
      h('p', { class: 'headline' }, d.holder === null ? 'Waiting for an agent to check in' : 'Out to ' + d.holder),
      rows([
        ['delivery', h('code', {}, d.delivery_id)],
        ['lease ends', d.holder === null ? none('when claimed') : time(d.lease_expires_at)],
        ['events', h('ul', { class: 'titles' }, d.events.map((e) =>
          h('li', {}, h('span', { class: 'chip' }, e.source), ' ', e.title, e.why && h('span', { class: 'muted' }, ' — ' + e.why), e.attempts > 1 && h('span', { class: 'muted' }, ' (attempt ' + e.attempts + ')'))))],
      ]),
    ],
    rows([
      ['gate', chip(g.state)],
      ['so far', g.delivered + ' delivered, ' + g.consumed_silently + ' consumed silently, ' + g.put_back + ' put back'],
      g.last_thought && ['thinker', [g.last_thought.by, g.last_thought.note && h('div', { class: 'error' }, g.last_thought.note)]],
      g.last_thought && ['last thought', h('ul', { class: 'titles' }, g.last_thought.events.map((e) =>
        h('li', {}, h('span', { class: 'chip' }, e.verdict === 'speak' ? 'deliver' : 'quiet'), ' ', e.title, e.why && h('span', { class: 'muted' }, ' — ' + e.why))))],
      g.failed_in_a_row > 0 && ['backing off', error(g.failed_in_a_row + ' failed thoughts in a row')],
      g.last_error && ['error', error(g.last_error)],
    ]));
};
const renderFocus = (f) =>
  fill('focus-body',
    h('p', { class: 'headline' }, f.until ? 'On: external events wait' : 'Off'),
    h('p', { class: 'muted' }, f.until ? ['Ends ', time(f.until), '; ', h('code', {}, 'pulse focus off'), ' ends it now.']
      : [h('code', {}, 'pulse focus 45m'), ' holds external events for 45 minutes.']),
    f.last_error && h('p', {}, error('focus.json: ' + f.last_error)));
const renderLog = (s) =>
  fill('log-body', rows([
    ['events', String(s.log.events)],
    ['latest', s.log.latest_event_id ? h('code', {}, s.log.latest_event_id) : none('none')],
    ['watcher', [chip(s.watcher.state), ' ' + s.watcher.changes_seen + ' changes seen']],
    s.log.last_error && ['error', error(s.log.last_error)],
    ...(s.log.unobservable || []).map((u) => ['cannot see', error(u.file + ' ' + u.reason)]),
    s.watcher.down ? ['watcher down', error(s.watcher.down + ': .pulse/ is polled every second until the watch works again')]
      : s.watcher.last_error && ['watcher error', error(s.watcher.last_error + ' (recovered)')],
    ...s.log.warnings.map((w) => ['warning', error(w)]),
  ]));
const renderPollers = (src) =>
  fill('pollers-body',
    src.error && h('p', { class: 'error' }, 'sources.json: ' + src.error + ' (the last good config keeps running)'),
    src.warnings.map((w) => h('p', { class: 'error' }, w)),
    table(['source', 'state', 'last poll', 'next poll', 'items', 'last error'], src.pollers.map((p) => [
      [h('span', { class: 'mono' }, p.source), h('div', { class: 'muted mono' }, p.server + '.' + p.tool + ', every ' + p.interval_sec + ' s')],
      chip(p.state), time(p.last_poll_at, 'never'), time(p.next_poll_at), String(p.items_seen),
      p.last_error ? [error(p.last_error), h('div', { class: 'muted' }, p.failures + ' failures')] : none('none'),
    ]), 'No sources configured: add them to .pulse/sources.json.'));
const renderDead = (g) =>
  fill('dead-body',
    table(['at', 'source', 'title', 'why'], [...g.dead_letters].reverse().map((d) => [
      time(d.at), h('span', { class: 'chip' }, d.source), d.title,
      d.reason === 'overflow' ? 'pushed out of a full inbox' : d.attempts + ' failed attempts',
    ]), 'None: no event was given up on.'),
    g.dead_lettered ? h('p', { class: 'muted' }, g.dead_lettered + ' this run; all of them are in .pulse/dead-letters.jsonl') : null);
const renderEvents = (events) =>
  fill('events-body', table(['id', 'file', 'kind', 'time'], events.map((e) => [
    h('code', {}, e.id), h('code', {}, e.path), e.kind, time(e.timestamp),
  ]), 'No events logged yet.'));

const render = (s) => {
  renderReplan(s.replan);
  renderActors(s);
  renderInbox(s.inbox);
  renderDelivery(s.gate);
  renderFocus(s.focus);
  renderLog(s);
  renderPollers(s.sources);
  renderDead(s.gate);
  renderEvents(s.recent_events);
  fill('updated', 'updated ', time(new Date().toISOString()));
  document.title = (s.replan.pending_replan_event_id ? 'Replan pending · ' : '') + TITLE;
};

const TITLE = document.title;
const setConnection = (state, text) => {
  const badge = $('conn');
  badge.dataset.state = state;
  badge.textContent = text;
  document.body.classList.toggle('stale', state !== 'live');
};
const connect = () => {
  const source = new EventSource('/status/stream');
  source.addEventListener('status', (event) => {
    setConnection('live', 'Live');
    render(JSON.parse(event.data));
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (503: too many pages open) or not a stream: EventSource gives up, so try again later.
      source.close();
      setConnection('down', 'The daemon refused the stream; trying again in 5 s');
      setTimeout(connect, 5000);
    } else {
      setConnection('down', 'Disconnected: the daemon is not answering (stopped?). Reconnecting…');
    }
  };
};
setInterval(() => {
  for (const node of document.querySelectorAll('time[data-at]')) node.textContent = relative(node.dataset.at);
}, 1000);
connect();
`;

const cspHash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Headers for the page: it may run only its own style and script, and talk only to its own origin. */
export const STATUS_PAGE_HEADERS = {
  'Content-Security-Policy': [
    "default-src 'none'",
    `style-src ${cspHash(STYLE)}`,
    `script-src ${cspHash(SCRIPT)}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const card = (id: string, title: string, wide = false) =>
  `<section class="card${wide ? ' wide' : ''}" id="${id}"><h2>${title}</h2><div id="${id}-body"><p class="muted">Waiting for the daemon…</p></div></section>`;

/** `GET /`: the live status page of the daemon serving `project`. */
export const statusPage = ({
  project,
  version,
}: {
  project: string;
  version: string;
}): string => `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>pulse · ${escapeHtml(basename(project))}</title>
<style>${STYLE}</style>
</head>
<body class="stale">
<header>
<h1>pulse</h1>
<p class="project" title="${escapeHtml(project)}">${escapeHtml(project)}</p>
<p id="conn" role="status" data-state="connecting">Connecting…</p>
</header>
<main>
${card('replan', 'Replan')}
${card('delivery', 'Delivery to the agent')}
${card('inbox', 'Inbox')}
${card('actors', 'Actors')}
${card('log', 'Event log')}
${card('focus', 'Focus')}
${card('pollers', 'Sources', true)}
${card('events', 'Recent events', true)}
${card('dead', 'Dead letters', true)}
</main>
<footer>pulse ${escapeHtml(version)} · <span id="updated"></span> · the same as JSON: <a href="/status">/status</a> · MCP at /mcp</footer>
<script>${SCRIPT}</script>
</body>
</html>
`;
