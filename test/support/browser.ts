import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

// Debian's Chromium under playwright-core (never a downloaded browser), for the status page's tests.

const CHROMIUM = '/usr/bin/chromium';

/** Where the screenshots go: PULSE_SHOTS_DIR when set (to look at them), else a temp dir. */
export const shotsDir = async (): Promise<string> => {
  const dir = process.env.PULSE_SHOTS_DIR ?? (await mkdtemp(join(tmpdir(), 'pulse-shots-')));
  await mkdir(dir, { recursive: true });
  return dir;
};

/** Why the browser test cannot run here, or null when Debian's Chromium is installed. */
const NO_BROWSER = existsSync(CHROMIUM)
  ? null
  : `no Chromium at ${CHROMIUM}: scripts/install-browser.sh installs it (as root or with sudo)`;

/** Skips the test, saying why, when Chromium is missing; in CI (PULSE_REQUIRE_BROWSER=1) fails it instead. */
export const needBrowser = (context: { skip: (note: string) => void }): void => {
  if (NO_BROWSER === null) return;
  // CI installs the browser first (.ci/run) and never lets this test skip.
  if (process.env.PULSE_REQUIRE_BROWSER === '1') throw new Error(NO_BROWSER);
  console.warn(`skipped the status page in Chromium: ${NO_BROWSER}`);
  context.skip(NO_BROWSER);
};

/** Debian's Chromium under playwright-core. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox'] });

/** A page that records CSP violations, script errors and every request it makes. */
export const watchedPage = async (browser: Browser, options: { javaScriptEnabled?: boolean } = {}) => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, ...options });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy|Refused to/.test(message.text()))
      problems.push(message.text());
  });
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
  return { page, problems, requests };
};

/** The text of the first element `selector` finds. */
export const text = (page: Page, selector: string) => page.locator(selector).first().textContent();
