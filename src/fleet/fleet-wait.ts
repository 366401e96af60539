import type { FleetChange, FleetContext, FleetReceiptSeen } from '../../machines/fleet-context.js';
import { terminalText } from '../text/terminal-text.js';

/** One agent of another member waited for: where, who, and how it ended. */
interface Waited {
  machine: string;
  label: string;
  outcome: 'owes' | 'acknowledged' | 'gone';
}

/** A receipt as `--wait` prints it: machine and agent, what became of the plan, the diff indented. */
const formatReceipt = (receipt: FleetReceiptSeen): string[] => [
  `${receipt.machine}: ${receipt.label} acknowledged ${receipt.steerId}${receipt.plan_changed ? `: ${receipt.summary}` : ' without changing the plan'}`,
  ...(receipt.diff === null ? [] : receipt.diff.split('\n').map((line) => `    ${line}`)),
];

/**
 * Follows the other members' agents for one change made here (the event `eventId`, which the
 * fleet carries as a steer): each member that applied it, each of its agents that owes it, each
 * receipt as it comes. Only the fleet's receipts count: this member's own agents are the local
 * watch's. The change counts as answered by an ack of it or of a later change.
 */
export class FleetAckWatch {
  #change: FleetChange | null = null;
  readonly #printed = new Set<string>();
  readonly #waited = new Map<string, Waited>();
  #members: { machine: string; applied: boolean }[] = [];

  constructor(readonly eventId: string) {}

  /** Whether every other member has applied the change and none of their agents still owes it. */
  get done(): boolean {
    return (
      this.#change?.seq != null &&
      this.#members.every((m) => m.applied) &&
      [...this.#waited.values()].every((w) => w.outcome !== 'owes')
    );
  }

  /** Who still owes it on other members, in words (`machine: agent`), and members that have not applied it. */
  get owing(): string[] {
    if (this.#change?.seq == null) return ['the fleet (the change has not reached the fleet’s stream yet)'];
    return [
      ...[...this.#waited.values()]
        .filter((w) => w.outcome === 'owes')
        .map((w) => `${w.machine}: ${w.label}`),
      ...this.#members.filter((m) => !m.applied).map((m) => `${m.machine} (has not applied it yet)`),
    ];
  }

  /** What changed in the fleet since the last status, as lines. */
  see(fleet: FleetContext): string[] {
    this.#change =
      fleet.changes.find((c) => c.eventId === this.eventId && c.eventId !== null) ?? this.#change;
    const change = this.#change;
    if (change === null || change.seq === null) return [];
    const steerSeq = change.seq;
    const seqOf = (steerId: string) => fleet.changes.find((c) => c.steerId === steerId)?.seq ?? null;
    // A change this member does not know the place of came after it (it knows every earlier one).
    const answers = (steerId: string, seq: number | null) =>
      steerId === change.steerId || (seq ?? seqOf(steerId) ?? Number.POSITIVE_INFINITY) > steerSeq;
    const lines: string[] = [];
    for (const receipt of fleet.receipts) {
      if (receipt.machine === fleet.machine || this.#printed.has(receipt.receiptId)) continue;
      if (!answers(receipt.steerId, null)) continue;
      this.#printed.add(receipt.receiptId);
      const key = `${receipt.machine} ${receipt.agent}`;
      const waited = this.#waited.get(key);
      if (waited?.outcome === 'acknowledged') continue;
      this.#waited.set(key, { machine: receipt.machine, label: receipt.label, outcome: 'acknowledged' });
      lines.push(...formatReceipt(receipt));
    }
    const others = fleet.members.filter((m) => m.machine !== fleet.machine);
    this.#members = others.map((m) => ({
      machine: m.machine,
      applied: (m.applied[change.file] ?? 0) >= steerSeq,
    }));
    for (const member of others) {
      if ((member.applied[change.file] ?? 0) < steerSeq) continue;
      for (const agent of member.agents) {
        const key = `${member.machine} ${agent.agent}`;
        if (this.#waited.has(key) || agent.owes === null || !answers(agent.owes, agent.owesSeq)) continue;
        this.#waited.set(key, { machine: member.machine, label: agent.label, outcome: 'owes' });
        lines.push(`${member.machine}: ${agent.label} owes it`);
      }
      for (const [key, waited] of this.#waited) {
        if (waited.machine !== member.machine || waited.outcome !== 'owes') continue;
        if (member.agents.some((a) => `${member.machine} ${a.agent}` === key)) continue;
        waited.outcome = 'gone';
        lines.push(`${member.machine}: ${waited.label} left: not waited for`);
      }
    }
    return lines.map((line) =>
      line.startsWith('    ') ? `    ${terminalText(line.slice(4))}` : terminalText(line),
    );
  }
}
