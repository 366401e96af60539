import type { ReplanAck } from '../../machines/replan-acks.js';
import { FleetAckWatch } from '../fleet/fleet-wait.js';
import type { SteerAnswer } from '../http/steer-route.js';
import { agentLabel } from '../system/agent-label.js';
import type { ReplanAgentStatus, SystemStatus } from '../system/system-status.js';
import { formatDuration } from '../text/duration.js';
import { terminalText } from '../text/terminal-text.js';
import { DaemonGoneError, followStatus } from './status-follow.js';

/** One agent waited for: who, by its parties (an agent tied to another later keeps them), and how it ended. */
interface Waited {
  label: string;
  parties: Set<string>;
  outcome: 'owes' | 'acknowledged' | 'gone';
}

const shares = (parties: Set<string>, others: readonly string[]) => others.some((p) => parties.has(p));

const seconds = (ms: number) =>
  ms < 1000 ? 'at once' : `after ${formatDuration(Math.round(ms / 1000) * 1000)}`;

/** An ack as `--wait` prints it: who, when, what became of the plan, then the diff indented (unless `shown` already). */
const formatAck = (ack: ReplanAck, startedAt: number, shown: boolean): string[] => [
  `${agentLabel(ack)} acknowledged ${ack.event_id} ${seconds(Date.parse(ack.at) - startedAt)}${ack.plan_changed ? `: ${ack.summary}` : ' without changing the plan'}${ack.diff !== null && shown ? ' (the diff above)' : ''}`,
  ...(ack.diff === null || shown ? [] : ack.diff.split('\n').map((line) => `    ${line}`)),
];

/**
 * Follows one project's acks of `eventId`: every agent that owed it when it was written, and any
 * that comes and owes it while waiting. Each status seen gives the lines to print: an ack with
 * its plan diff, an agent that left (not waited for), a newcomer that owes it too.
 */
export class AckWatch {
  readonly #waited: Waited[];
  readonly #printed = new Set<string>();
  /** The diffs printed, by the plan's hash at the ack: another ack with the same diff refers to it. */
  readonly #diffs = new Set<string>();

  constructor(
    readonly eventId: string,
    owing: readonly ReplanAgentStatus[],
    readonly startedAt: number,
  ) {
    this.#waited = owing.map((agent) => ({
      label: agent.label,
      parties: new Set(agent.parties),
      outcome: 'owes',
    }));
  }

  /** Whether no agent owes the event any more. */
  get done(): boolean {
    return this.#waited.every((w) => w.outcome !== 'owes');
  }

  /** Who still owes it, in words. */
  get owing(): string[] {
    return this.#waited.filter((w) => w.outcome === 'owes').map((w) => w.label);
  }

  /** What changed since the last status, as lines. */
  see(status: SystemStatus): string[] {
    const lines: string[] = [];
    for (const ack of status.replan.acks ?? []) {
      const key = `${ack.agent} ${ack.event_id} ${ack.at}`;
      if (ack.event_id < this.eventId || this.#printed.has(key)) continue;
      this.#printed.add(key);
      const waited = this.#waited.find((w) => shares(w.parties, ack.parties));
      if (waited === undefined)
        this.#waited.push({
          label: agentLabel(ack),
          parties: new Set(ack.parties),
          outcome: 'acknowledged',
        });
      else if (waited.outcome === 'owes') waited.outcome = 'acknowledged';
      else continue;
      const shown = this.#diffs.has(`${ack.plan_before_sha256} ${ack.plan_after_sha256}`);
      this.#diffs.add(`${ack.plan_before_sha256} ${ack.plan_after_sha256}`);
      lines.push(...formatAck(ack, this.startedAt, shown));
    }
    const agents = status.replan.agents ?? [];
    for (const waited of this.#waited) {
      if (waited.outcome !== 'owes') continue;
      const now = agents.find((agent) => shares(waited.parties, agent.parties ?? []));
      if (now === undefined) {
        waited.outcome = 'gone';
        lines.push(`${waited.label} left (its session closed, or it went quiet): not waited for`);
        continue;
      }
      for (const party of now.parties) waited.parties.add(party);
      waited.label = now.label;
      if (now.owes === null || now.owes < this.eventId) {
        waited.outcome = 'acknowledged';
        lines.push(
          `${waited.label} acknowledged ${this.eventId} (pulse no longer keeps what became of its plan)`,
        );
      }
    }
    for (const agent of agents) {
      if (agent.owes === null || agent.owes < this.eventId) continue;
      if (this.#waited.some((w) => shares(w.parties, agent.parties))) continue;
      this.#waited.push({ label: agent.label, parties: new Set(agent.parties), outcome: 'owes' });
      lines.push(`${agent.label} came to work and owes it too`);
    }
    return lines.map(terminalText);
  }
}

/** How `--wait` ended: every agent acknowledged (0), the daemon stopped (1), the timeout (3), Ctrl-C (130). */
export type WaitEnd = 0 | 1 | 3 | 130;

/**
 * `--wait`: follows each project written (its status stream, else `/status` each second) and
 * prints each agent's ack with its plan diff as it comes, until no agent owes the event, the
 * timeout, or Ctrl-C (which changes nothing). Returns the exit code.
 */
export const waitForAcks = async (
  written: ReadonlyArray<{ answer: SteerAnswer; status: string; stream: string }>,
  { timeoutMs, print, now = Date.now() }: { timeoutMs: number; print: (line: string) => void; now?: number },
): Promise<WaitEnd> => {
  const stop = new AbortController();
  let end: WaitEnd = 0;
  const finish = (code: WaitEnd) => {
    if (!stop.signal.aborted) end = code;
    stop.abort();
  };
  const timer = setTimeout(() => finish(3), timeoutMs);
  const interrupt = () => finish(130);
  process.once('SIGINT', interrupt);
  // Said only once Ctrl-C is ours: one pressed on reading it stops the wait, never the process.
  print(
    `Waiting up to ${formatDuration(timeoutMs)} for every agent to acknowledge (Ctrl-C stops waiting; the change stands)…`,
  );
  const prefix = (answer: SteerAnswer) => (written.length > 1 ? `[${answer.project_id}] ` : '');
  const watches = written.map(({ answer }) => new AckWatch(answer.event_id!, answer.owing, now));
  // In a fleet, every agent on every member serving the project owes it too.
  const fleetWatches = written.map(({ answer }) =>
    answer.fleet ? new FleetAckWatch(answer.event_id!) : null,
  );
  const done = (index: number) => watches[index]!.done && (fleetWatches[index]?.done ?? true);
  try {
    await Promise.all(
      written.map(async ({ answer, status, stream }, index) => {
        const watch = watches[index]!;
        const fleetWatch = fleetWatches[index];
        if (done(index)) return;
        try {
          for await (const seen of followStatus({ status, stream }, stop.signal)) {
            for (const line of watch.see(seen)) print(`${prefix(answer)}${line}`);
            if (fleetWatch && seen.fleet)
              for (const line of fleetWatch.see(seen.fleet)) print(`${prefix(answer)}${line}`);
            if (done(index)) return;
          }
        } catch (error) {
          if (!(error instanceof DaemonGoneError)) throw error;
          print(`${prefix(answer)}${terminalText(error.message)}`);
          finish(1);
        }
      }),
    );
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', interrupt);
    stop.abort();
  }
  written.forEach(({ answer }, index) => {
    const owing = [...watches[index]!.owing, ...(fleetWatches[index]?.owing ?? [])];
    if (owing.length === 0) {
      if (end === 0)
        print(
          `${prefix(answer)}Every agent${fleetWatches[index] ? ' on every member' : ''} has acknowledged ${answer.event_id}.`,
        );
      return;
    }
    const why =
      end === 3
        ? `Timed out after ${formatDuration(timeoutMs)}`
        : end === 130
          ? 'Stopped waiting (the change stands)'
          : 'Stopped';
    print(terminalText(`${prefix(answer)}${why}: still owing ${answer.event_id}: ${owing.join('; ')}`));
  });
  return end;
};
