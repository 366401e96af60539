// The status page's script: follows `/status/stream`, redraws every card from each status with
// the same card model the server drew the first view with, and moves the diagrams' highlights.
import type { SystemStatus } from '../../../system/system-status.js';
import { CARDS } from '../cards.js';
import { diagramView } from '../diagrams.js';
import { time } from '../view.js';
import { fill, refreshTimes } from './dom.js';
import { setUpSteering } from './steer.js';

const byId = (id: string): HTMLElement => document.getElementById(id)!;

const TITLE = document.title.replace(/^Replan pending · /, '');

const renderDiagrams = (status: SystemStatus) => {
  for (const figure of document.querySelectorAll<HTMLElement>('figure[data-machine]')) {
    const actor = figure.dataset.machine!;
    const view = diagramView(status, actor);
    const active = new Set(view.active);
    for (const box of figure.querySelectorAll<SVGGElement>('[data-state], [data-actor]'))
      box.classList.toggle('active', active.has(box.dataset.state ?? box.dataset.actor!));
    fill(byId(`machine-${actor}-caption`), view.caption);
  }
};

const render = (status: SystemStatus) => {
  for (const { id, render, alert } of CARDS) {
    fill(byId(`${id}-body`), render(status));
    byId(id).classList.toggle('alert', alert?.(status) ?? false);
  }
  renderDiagrams(status);
  fill(byId('updated'), ['updated ', time(new Date().toISOString())]);
  document.title = (status.replan.pending_replan_event_id ? 'Replan pending · ' : '') + TITLE;
};

const setConnection = (state: 'connecting' | 'live' | 'down', text: string) => {
  const badge = byId('conn');
  badge.dataset.state = state;
  badge.textContent = text;
  document.body.classList.toggle('stale', state === 'down');
};

const connect = () => {
  const source = new EventSource('status/stream');
  source.addEventListener('status', (event) => {
    setConnection('live', 'Live');
    render(JSON.parse((event as MessageEvent<string>).data) as SystemStatus);
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

setUpSteering();
setConnection('connecting', 'Connecting…');
setInterval(refreshTimes, 1000);
connect();
