import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { html, raw } from 'hono/html';
import { SCRIPT, STYLE } from './assets.generated.js';
import { CARDS } from './cards.js';

// One self-contained document, nothing fetched but the stream, so it works offline. The script
// (client/, built by scripts/build-status-page.mjs) renders with DOM nodes and text only, and the
// CSP allows exactly this style and this script by hash. Every value below is escaped by `html`.

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

const card = ({ id, title, wide }: (typeof CARDS)[number]) =>
  html`<section class="${wide ? 'card wide' : 'card'}" id="${id}"><h2>${title}</h2><div id="${id}-body"><p class="muted">Waiting for the daemon…</p></div></section>`;

/** `GET /`: the live status page of the daemon serving `project`. */
export const statusPage = ({ project, version }: { project: string; version: string }) => html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>pulse · ${basename(project)}</title>
<style>${raw(STYLE)}</style>
</head>
<body class="stale">
<header>
<h1>pulse</h1>
<p class="project" title="${project}">${project}</p>
<p id="conn" role="status" data-state="connecting">Connecting…</p>
</header>
<main>
${CARDS.map(card)}
</main>
<footer>pulse ${version} · <span id="updated"></span> · the same as JSON: <a href="/status">/status</a> · MCP at /mcp</footer>
<script>${raw(SCRIPT)}</script>
</body>
</html>
`;
