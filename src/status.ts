import { readFile } from 'node:fs/promises';
import { EventIndex } from '../machines/event-index.js';
import { type Discovery, readDiscovery } from './store/discovery-file.js';
import { readEventLog } from './store/event-log-file.js';
import type { PulsePaths } from './store/paths.js';

/** What `pulse status` reports, from the running daemon or, when none runs, from the files. */
export interface StatusReport {
  project: string;
  daemon: { running: boolean; url: string | null; pid: number | null; version: string | null };
  needs_replan: boolean;
  pending_replan_event_id: string | null;
  pending_replan_files: string[];
  latest_event_id: string | null;
  events: number;
  last_acknowledged_event_id: string | null;
  last_acknowledged_plan_sha256: string | null;
  last_acknowledged_at: string | null;
  warnings: string[];
}

const askDaemon = async (discovery: Discovery): Promise<Record<string, unknown> | null> => {
  try {
    const response = await fetch(discovery.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'pulse_should_interrupt', arguments: {} },
      }),
      signal: AbortSignal.timeout(2000),
    });
    const body = (await response.json()) as { result?: { structuredContent?: Record<string, unknown> } };
    return body.result?.structuredContent ?? null;
  } catch {
    return null;
  }
};

const readState = async (path: string): Promise<Record<string, unknown>> => {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
};

const str = (value: unknown) => (typeof value === 'string' ? value : null);

/** Reads status without writing anything, so it is safe beside a running daemon. */
export const readStatus = async (paths: PulsePaths): Promise<StatusReport> => {
  const discovery = await readDiscovery(paths.dir);
  const live = discovery ? await askDaemon(discovery) : null;
  const state = await readState(paths.state);
  const daemon = {
    running: live !== null,
    url: live ? discovery!.url : null,
    pid: live ? discovery!.pid : null,
    version: live ? discovery!.version : null,
  };
  if (live) {
    return {
      project: paths.projectRoot,
      daemon,
      needs_replan: live.needs_replan === true,
      pending_replan_event_id: str(live.pending_replan_event_id),
      pending_replan_files: (live.pending_replan_files as string[]) ?? [],
      latest_event_id: str(live.latest_event_id),
      events: Number(live.new_event_count ?? 0),
      last_acknowledged_event_id: str(live.last_acknowledged_event_id),
      last_acknowledged_plan_sha256: str(live.last_acknowledged_plan_sha256),
      last_acknowledged_at: str(state.last_acknowledged_at),
      warnings: [],
    };
  }
  const { events, warnings } = await readEventLog(paths.events, { repair: false });
  const index = EventIndex.from(events);
  const ackId = str(state.last_acknowledged_event_id);
  const pending = index.pendingAfter(ackId);
  return {
    project: paths.projectRoot,
    daemon,
    needs_replan: pending.pendingEventId !== null,
    pending_replan_event_id: pending.pendingEventId,
    pending_replan_files: pending.pendingFiles,
    latest_event_id: index.latest?.id ?? null,
    events: index.size,
    last_acknowledged_event_id: ackId,
    last_acknowledged_plan_sha256: str(state.last_acknowledged_plan_sha256),
    last_acknowledged_at: str(state.last_acknowledged_at),
    warnings,
  };
};

/** The readable form of a status report. */
export const formatStatus = (report: StatusReport): string => {
  const lines = [
    `project:   ${report.project}`,
    `daemon:    ${report.daemon.running ? `running (pid ${report.daemon.pid}) at ${report.daemon.url}` : 'not running (start it with `pulse start`)'}`,
    `replan:    ${report.needs_replan ? `PENDING — ${report.pending_replan_event_id} (${report.pending_replan_files.join(', ')})` : 'nothing pending'}`,
    `events:    ${report.events}${report.latest_event_id ? `, latest ${report.latest_event_id}` : ''}`,
    `last ack:  ${report.last_acknowledged_event_id ? `${report.last_acknowledged_event_id} at ${report.last_acknowledged_at ?? '?'} (plan ${report.last_acknowledged_plan_sha256?.slice(0, 12) ?? 'none'})` : 'none'}`,
  ];
  for (const warning of report.warnings) lines.push(`warning:   ${warning}`);
  return lines.join('\n');
};
