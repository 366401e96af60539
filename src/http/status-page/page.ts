import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { html, raw } from 'hono/html';
import type { OwingAgent, SystemStatus } from '../../system/system-status.js';
import { SCRIPT, STYLE } from './assets.generated.js';
import { CARDS, type Card } from './cards.js';
import { diagramView } from './diagrams.js';
import { toHtml } from './html.js';
import { DIAGRAMS } from './machines.generated.js';
import { time } from './view.js';

// One self-contained document, nothing fetched but the stream, so it works offline. It arrives
// with the status of the moment already drawn (the same card model the script redraws from each
// frame of the stream), so the page has content without JavaScript and before the stream
// connects. The CSP allows exactly this style and this script by hash; the machine diagrams are
// inline SVG drawn at build time. Every value is escaped by `html` or by `toHtml`.

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

const card =
  (status: SystemStatus) =>
  ({ id, title, wide, render, alert }: Card) =>
    html`<section class="${['card', wide && 'wide', alert?.(status) && 'alert'].filter(Boolean).join(' ')}" id="${id}"><h2>${title}</h2><div id="${id}-body">${raw(toHtml(render(status)))}</div></section>`;

/** A diagram's SVG with the boxes in `active` marked: the script moves the marks from then on. */
const marked = (svg: string, active: readonly string[]) => {
  const on = new Set(active);
  return svg.replace(
    /<g class="state (\w+)" data-(state|actor)="([^"]*)"/g,
    (tag, kind: string, attribute: string, path: string) =>
      on.has(path) ? `<g class="state ${kind} active" data-${attribute}="${path}"` : tag,
  );
};

/** Diagrams wider than this take a whole row of the grid. */
const WIDE_DIAGRAM = 580;

/**
 * The widest a diagram can be and still show whole on a wide window: main's 1280 px less its
 * padding (2 × 24), the card's border and padding (2 × 15) and the figure's (2 × 9). Wider ones
 * scroll sideways; the build lays every diagram out narrower than this (test/e2e/status-page-diagrams).
 */
export const DIAGRAM_MAX_WIDTH = 1280 - 2 * 24 - 2 * 15 - 2 * 9;

const figure =
  (status: SystemStatus) =>
  ({ actor, svg, width }: (typeof DIAGRAMS)[number]) => {
    const view = diagramView(status, actor);
    return html`<figure class="${width > WIDE_DIAGRAM ? 'diagram wide' : 'diagram'}" id="machine-${actor}" data-machine="${actor}"><figcaption><span class="mono">${actor}</span> <span id="machine-${actor}-caption">${raw(toHtml(view.caption))}</span></figcaption><div class="scroll">${raw(marked(svg, view.active))}</div></figure>`;
  };

/** A project the daemon serves, as the pages link to it. */
export interface ServedLink {
  id: string;
  root: string;
  /** Its status page. */
  page: string;
  /** Its agents that still owe an ack, and the change each owes. */
  owing: readonly OwingAgent[];
}

/** Who in a project still owes an ack, for the list of projects: a line each, or that nobody does. */
const owingList = (owing: readonly OwingAgent[]) =>
  owing.length === 0
    ? html`<div class="muted">No agent owes an acknowledgement.</div>`
    : html`<ul class="owing">${owing.map((o) => html`<li>${o.agent} owes <code>${o.owes}</code></li>`)}</ul>`;

const servedNav = (served: readonly ServedLink[], project: string) =>
  served.length < 2
    ? ''
    : html`<nav class="projects" aria-label="Projects served">${served.map((p) =>
        p.root === project
          ? html`<strong title="${p.root}">${p.id}</strong> `
          : html`<a href="${p.page}" title="${p.root}">${p.id}</a> `,
      )}</nav>`;

/** One form of the steer card: a file's new text (or a paragraph to add), saved through `POST steer`. */
const steerForm = (file: 'guidance' | 'constraints', what: string, placeholder: string) =>
  html`<form class="steer" id="steer-${file}" data-file="${file}"><fieldset disabled><legend>${file}.md <span class="muted">${what}</span></legend><textarea name="text" rows="4" placeholder="${placeholder}" aria-label="New ${file}"></textarea><div class="steer-row"><label><input type="radio" name="mode" value="replace" checked> replace the file</label><label><input type="radio" name="mode" value="append"> add as a paragraph</label><button type="button" class="load">Load the current text</button><button type="submit">Save ${file}</button></div><p class="steer-result" role="status" aria-live="polite"></p></fieldset></form>`;

/**
 * The steer card: outside the cards the stream redraws, so what the user types stays; its forms
 * are enabled by the script (the page's CSP lets no form submit by itself).
 */
const steerCard = () =>
  html`<section class="card wide" id="steer"><h2>Steer the agents</h2><p class="muted">Saving writes the file as if you had saved it yourself: every agent working in the project must replan and acknowledge it before its next tool call. Below, who still owes it and what each did with its plan.</p><div class="steer-forms">${steerForm('guidance', 'may change the task’s direction', 'e.g. Prefer a smaller patch; leave the public API alone.')}${steerForm('constraints', 'may restrict, never widen, what agents may do', 'e.g. Do not run migrations against the shared database.')}</div><p class="muted" id="steer-needs-script">Saving from this page needs JavaScript; or run <code>pulse guide "…"</code>.</p></section>`;

/**
 * `GET /p/<id>/` (and `/` while one project is served): the status page of `project`, showing
 * `status` until the stream takes over, with a link to each other project this daemon serves.
 * `steerToken` is the daemon's token for the page's writes, which a page of another origin cannot read.
 */
export const statusPage = ({
  project,
  version,
  status,
  served = [],
  mcpUrl = '/mcp',
  steerToken = '',
}: {
  project: string;
  version: string;
  status: SystemStatus;
  served?: readonly ServedLink[];
  /** The project's MCP endpoint, as the footer names it. */
  mcpUrl?: string;
  steerToken?: string;
}) => html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<meta name="pulse-steer-token" content="${steerToken}">
<title>${status.replan.pending_replan_event_id ? 'Replan pending · ' : ''}pulse · ${basename(project)}</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<header>
<h1>pulse</h1>
<p class="project" title="${project}">${project}</p>
<p id="conn" role="status" data-state="snapshot">Snapshot from the server (live updates need JavaScript)</p>
${servedNav(served, project)}
</header>
<main>
${steerCard()}
${CARDS.map(card(status))}
<section class="card wide" id="machines"><h2>Machines</h2><p class="muted">Each actor's statechart, drawn from its machine definition: the highlighted boxes are the states it is in now. Hover a box for what the state means.</p>${DIAGRAMS.map(figure(status))}</section>
</main>
<footer>pulse ${version} · <span id="updated">${raw(toHtml(['as of ', time(new Date().toISOString())]))}</span> · the same as JSON: <a href="status">status</a> · MCP at ${mcpUrl}</footer>
<script>${raw(SCRIPT)}</script>
</body>
</html>
`;

/** `GET /` on a daemon serving several projects (or none): a link to each one's page. */
export const projectsPage = ({ version, served }: { version: string; served: readonly ServedLink[] }) =>
  html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>pulse · ${served.length} projects</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<header>
<h1>pulse</h1>
<p class="project">${served.length === 0 ? 'No project is served now.' : `Serving ${served.length} projects`}</p>
</header>
<main>
<section class="card wide" id="projects"><h2>Projects</h2><ul>${served.map(
    (p) =>
      html`<li><a href="${p.page}">${p.id}</a> <span class="mono">${p.root}</span>${owingList(p.owing)}</li>`,
  )}</ul></section>
</main>
<footer>pulse ${version} · the same as JSON: <a href="/projects">/projects</a></footer>
</body>
</html>
`;
