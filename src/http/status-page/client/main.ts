// The status page's script: follows `/status/stream` and redraws every card from each status.
import type { SystemStatus } from '../../../system/system-status.js';
import { CARDS } from '../cards.js';
import { RENDERERS } from './cards.js';
import { fill, relative, time } from './dom.js';

const byId = (id: string): HTMLElement => document.getElementById(id)!;

const TITLE = document.title;

const render = (status: SystemStatus) => {
  for (const { id } of CARDS) fill(byId(`${id}-body`), RENDERERS[id](status, byId(id)));
  fill(byId('updated'), 'updated ', time(new Date().toISOString()));
  document.title = (status.replan.pending_replan_event_id ? 'Replan pending · ' : '') + TITLE;
};

const setConnection = (state: 'live' | 'down', text: string) => {
  const badge = byId('conn');
  badge.dataset.state = state;
  badge.textContent = text;
  document.body.classList.toggle('stale', state !== 'live');
};

const connect = () => {
  const source = new EventSource('/status/stream');
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

setInterval(() => {
  for (const node of document.querySelectorAll<HTMLElement>('time[data-at]'))
    node.textContent = relative(node.dataset.at!);
}, 1000);
connect();
