import { createHash, randomBytes } from 'node:crypto';
import {
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection, nanos } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { FleetContext, FleetEvent, FleetMemberSeen } from '../../machines/fleet-context.js';
import { alreadyApplied, isLocalEdit, joinBackoffStep } from '../../machines/fleet-decisions.js';
import type { PulseActor } from '../../machines/pulse.js';
import type { SteerFile, SteerRequest, SteerWritten } from '../../machines/steer-context.js';
import { readBoundedText } from '../store/read-bounded.js';
import { STEER_LIMIT, steeredText, steerPath } from '../store/steer-file.js';
import { lookUp, systemOf } from '../system/actors.js';
import { askSteer, logOf, replanOf } from '../system/ask-actors.js';
import { replanAgentsStatus } from '../system/read-status.js';
import { fleetChanges } from './fleet-changes.js';
import { fleetConnectOptions } from './fleet-connect.js';
import {
  FLEET_STREAM,
  FLEET_SUBJECTS,
  type FleetMachine,
  fleetSteer,
  machineLabel,
  parseFleetSteer,
  projectSubjects,
  projectToken,
  STEERS_KEPT,
} from './fleet-messages.js';
import { type FleetOptions, fleetAuthLabel, fleetLabel } from './fleet-options.js';
import {
  ENTRY_AGENTS,
  type FleetMemberEntry,
  type FleetReceipt,
  fleetReceipt,
  parseFleetReceipt,
  parseMemberEntry,
} from './fleet-receipts.js';
import { fleetMachine, openFleetState } from './fleet-state.js';

/** The KV bucket of members: `<project token>.<machine id>` → who serves the project, seen when. */
const MEMBERS_BUCKET = 'pulse_fleet_members';
/** How often a member says it is there (a test may say more often). */
const MEMBER_BEAT_MS = Number(process.env.PULSE_FLEET_BEAT_MS) || 15_000;
/** A member silent for three beats has left the list (the bucket forgets it too, on its own). */
const MEMBER_TTL_MS = 3 * MEMBER_BEAT_MS;
/** Events looked at for a change's own event, newest last. */
const EVENTS_LOOKED_AT = 32;
/** Shas a member applied or published lately, per file: a scan showing one of them is no local edit. */
const RECENT_KEPT = 32;
const FILES: readonly SteerFile[] = ['guidance', 'constraints'];

/** What a member needs: the fleet, the project's key and id, its actor system and logger. */
export interface FleetMemberInput {
  options: FleetOptions;
  key: string;
  projectId: string;
  pulseDir: string;
  actor: PulseActor;
  log: Logger;
}

/** 250 ms doubling up to 10 s. */
const backoffMs = (attempt: number) => Math.min(250 * 2 ** attempt, 10_000);

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const newSteerId = () => `fst_${Date.now().toString(36)}_${randomBytes(6).toString('hex')}`;

/**
 * One project's member of the fleet: publishes each local change of guidance or constraints,
 * writes each steer from the fleet through the project's own steer writer (in the stream's
 * order, once each), and keeps what it could not send. Runs in the background; `close` ends it.
 */
export const startFleetMember = ({ options, key, projectId, pulseDir, actor, log }: FleetMemberInput) => {
  const machine: FleetMachine = fleetMachine();
  const subjects = projectSubjects(key);
  const token = projectToken(key);
  const store = openFleetState(projectId);
  const recent = new Map<SteerFile, string[]>(FILES.map((file) => [file, []]));
  const remember = (file: SteerFile, sha: string) =>
    recent.set(file, [...recent.get(file)!, sha].slice(-RECENT_KEPT));
  for (const file of FILES) {
    const sha = store.state.applied[file]?.sha256;
    if (sha) remember(file, sha);
  }
  for (const steer of store.state.outbox) if (steer.kind === 'steer') remember(steer.file, steer.sha256);
  const status: FleetContext = {
    server: fleetLabel(options.url),
    auth: fleetAuthLabel(options),
    key,
    machine: machineLabel(machine),
    refused: null,
    since: new Date().toISOString(),
    members: [],
    applied: { ...store.state.applied },
    unsent: store.state.outbox.length,
    changes: [],
    receipts: [],
  };
  actor.send({ type: 'fleet.join', fleet: status });
  /** Tells the project's fleet actor (what status and the page read). */
  const tell = (event: FleetEvent) => lookUp(systemOf(actor), 'fleet')?.send(event);
  let connected = false;
  const setConnection = (now: boolean) => {
    if (connected === now) return;
    connected = now;
    const at = new Date().toISOString();
    tell(now ? { type: 'fleet.connected', at } : { type: 'fleet.disconnected', at });
    if (!now) log.warn({ server: status.server }, 'fleet: disconnected; retrying with backoff');
    else log.info({ server: status.server }, 'fleet: connected');
  };
  const unsent = () => tell({ type: 'fleet.unsent', unsent: store.state.outbox.length });
  /** Set once the bucket is open: says the member's entry changed. */
  let entryChanged = () => {};
  const changes = fleetChanges((change) => {
    tell({ type: 'fleet.change', change });
    entryChanged();
  });
  const recentEvents = () => logOf(actor).getSnapshot().context.index.recent(EVENTS_LOOKED_AT);
  for (const file of FILES) {
    const applied = store.state.applied[file];
    if (applied)
      changes.add(
        {
          steerId: applied.steerId,
          file,
          seq: applied.seq,
          machine: applied.machine,
          at: '',
          shas: [applied.sha256],
        },
        recentEvents(),
      );
  }
  for (const out of store.state.outbox)
    if (out.kind === 'steer')
      changes.add(
        {
          steerId: out.steerId,
          file: out.file,
          seq: null,
          machine: status.machine,
          at: out.at,
          shas: [out.sha256],
        },
        recentEvents(),
      );
  let nc: NatsConnection | null = null;
  let following: ConsumerMessages | null = null;
  let js: JetStreamClient | null = null;
  let closed = false;

  let flushing: Promise<void> | null = null;
  let retries = 0;
  let retry: NodeJS.Timeout | null = null;
  /** A send that failed on a live connection (a frozen server answers nothing) is tried again with backoff. */
  const retryLater = () => {
    if (retry !== null || closed) return;
    retries = Math.min(retries + 1, 6);
    retry = setTimeout(() => {
      retry = null;
      void flush();
    }, backoffMs(retries));
    retry.unref();
  };
  /** Sends the outbox, oldest first; stops at the first failure and is tried again on reconnect. */
  const flush = (): Promise<void> => {
    flushing ??= (async () => {
      while (!closed && js !== null && store.state.outbox.length > 0) {
        const out = store.state.outbox[0]!;
        const [subject, id] =
          out.kind === 'steer'
            ? [subjects.steer(out.file), out.steerId]
            : [subjects.ack(machine.id), out.receiptId];
        try {
          const stored = await js.publish(subject, JSON.stringify(out), { msgID: id, timeout: 5000 });
          if (out.kind === 'steer')
            changes.add(
              {
                steerId: out.steerId,
                file: out.file,
                seq: stored.seq,
                machine: status.machine,
                at: out.at,
                shas: [],
              },
              recentEvents(),
            );
        } catch (error) {
          log.warn({ id, error: String(error) }, `fleet: a ${out.kind} could not be sent yet; kept`);
          retryLater();
          return;
        }
        retries = 0;
        store.state.outbox.shift();
        unsent();
        await store.save();
      }
    })().finally(() => {
      flushing = null;
    });
    return flushing;
  };

  /** Keeps a local change durably, then sends it. */
  const publish = async (file: SteerFile, text: string) => {
    const steer = fleetSteer(machine, file, text, newSteerId(), new Date().toISOString());
    remember(file, steer.sha256);
    changes.add(
      {
        steerId: steer.steerId,
        file,
        seq: null,
        machine: status.machine,
        at: steer.at,
        shas: [steer.sha256],
      },
      recentEvents(),
    );
    store.state.outbox.push(steer);
    unsent();
    await store.save();
    log.info({ file, steerId: steer.steerId }, 'fleet: steer published');
    void flush();
  };

  /** The steer writer's hook: what `pulse guide`, `pulse constrain` or the page wrote goes to the fleet. */
  const steered = async (request: SteerRequest, _written: SteerWritten) => {
    // A steer from the fleet is never sent back to it: no echo.
    if (closed || request.by === 'fleet') return;
    const text = await readBoundedText(steerPath(pulseDir, request.file), STEER_LIMIT).catch(() => null);
    if (text !== null) await publish(request.file, text);
  };

  // A hand edit reaches the fleet through the event log's scan: a hash not applied or sent lately.
  // What the file held at the last scan, kept across restarts: an edit made while the daemon was down is one too.
  const lastSeen = new Map<SteerFile, string | null>(
    FILES.flatMap((file) => (store.state.seen[file] === undefined ? [] : [[file, store.state.seen[file]!]])),
  );
  const scanned = () => {
    const snapshot = logOf(actor).getSnapshot();
    if (snapshot.matches('loading')) return;
    const { files } = snapshot.context;
    changes.seen(recentEvents());
    for (const file of FILES) {
      const tracked = files[`${file}.md`];
      const before = lastSeen.get(file);
      lastSeen.set(file, tracked.sha256);
      if (tracked.sha256 !== null && store.state.seen[file] !== tracked.sha256) {
        store.state.seen[file] = tracked.sha256;
        void store.save();
      }
      if (!isLocalEdit(tracked.sha256, before, recent.get(file)!)) continue;
      if (!tracked.truncated && tracked.text !== null) void publish(file, tracked.text);
    }
  };
  scanned();
  const scans = logOf(actor).subscribe(scanned);

  // Each agent's own ack of a fleet change becomes a receipt, kept durably in the outbox like a steer.
  const startedAt = new Date().toISOString();
  const receipted = new Set<string>();
  const acked = () => {
    for (const ack of replanOf(actor).getSnapshot().context.acks) {
      const key = `${ack.agent} ${ack.event_id} ${ack.at}`;
      // Acks state.json brought back were receipted by the run that took them.
      if (ack.at < startedAt || receipted.has(key)) continue;
      receipted.add(key);
      const change = changes.ofEvent(ack.event_id);
      if (change === undefined) {
        log.info({ eventId: ack.event_id }, 'fleet: an ack of a change the fleet did not carry; no receipt');
        continue;
      }
      const receipt: FleetReceipt = fleetReceipt(machine, change.steerId, ack);
      store.state.outbox.push(receipt);
      unsent();
      void store.save().then(() => flush());
      log.info({ steerId: change.steerId, receiptId: receipt.receiptId }, 'fleet: receipt published');
    }
    entryChanged();
  };
  const acks = replanOf(actor).subscribe(acked);

  /** Writes one steer from the fleet, once: a sequence at or before the last applied is a redelivery. */
  const apply = async (msg: JsMsg) => {
    const file = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
    if (!msg.subject.startsWith(`pulse.fleet.${token}.steer.`)) return;
    const steer = parseFleetSteer(msg.data, file);
    if (typeof steer === 'string') {
      log.warn({ seq: msg.seq, subject: msg.subject }, `fleet: a steer was refused: ${steer}`);
      return;
    }
    const applied = store.state.applied[steer.file];
    if (alreadyApplied(applied, msg.seq)) {
      log.info({ file: steer.file, seq: msg.seq }, 'fleet: steer already applied; not written again');
      return;
    }
    const from = machineLabel(steer.machine);
    const written = sha256(steeredText(null, steer.text, 'replace'));
    changes.add(
      {
        steerId: steer.steerId,
        file: steer.file,
        seq: msg.seq,
        machine: from,
        at: steer.at,
        shas: [steer.sha256, written],
      },
      recentEvents(),
    );
    // The file will hold the text as the steer writer normalises it: neither hash is a local edit.
    remember(steer.file, steer.sha256);
    remember(steer.file, written);
    try {
      await askSteer(actor, {
        file: steer.file,
        text: steer.text,
        mode: 'replace',
        by: 'fleet',
        origin: from,
      });
    } catch (error) {
      log.error({ steerId: steer.steerId, from }, `fleet: a steer could not be written: ${String(error)}`);
    }
    const done = { seq: msg.seq, steerId: steer.steerId, sha256: steer.sha256, machine: from };
    store.state.applied[steer.file] = done;
    tell({ type: 'fleet.applied', file: steer.file, applied: done });
    entryChanged();
    await store.save();
    log.info(
      { file: steer.file, steerId: steer.steerId, seq: msg.seq, from, pending: msg.info.pending },
      msg.info.pending === 0 ? 'fleet: steer applied; caught up' : 'fleet: steer applied',
    );
  };

  type MembersKv = Awaited<ReturnType<Kvm['create']>>;
  let members: MembersKv | null = null;
  /** What this member says of itself: its agents, each with the fleet change it owes, and what it applied. */
  const entry = (): FleetMemberEntry => {
    const agents = replanAgentsStatus(replanOf(actor).getSnapshot().context.agents)
      .slice(0, ENTRY_AGENTS)
      .map((agent) => {
        const owed = agent.owes === null ? undefined : changes.ofEvent(agent.owes);
        return {
          agent: agent.id,
          label: agent.label,
          owes: owed?.steerId ?? null,
          owesSeq: owed?.seq ?? null,
        };
      });
    const applied: FleetMemberEntry['applied'] = {};
    for (const file of FILES) {
      const seq = Math.max(store.state.applied[file]?.seq ?? 0, changes.latest(file)?.seq ?? 0);
      if (seq > 0) applied[file] = seq;
    }
    return { machine: status.machine, at: new Date().toISOString(), agents, applied };
  };
  let said = '';
  const beat = async (always: boolean) => {
    if (members === null) return;
    const { at: _, ...now } = entry();
    const shown = JSON.stringify(now);
    if (!always && shown === said) return;
    said = shown;
    await members.put(`${token}.${machine.id}`, JSON.stringify({ ...now, at: new Date().toISOString() }));
  };
  let entryTimer: NodeJS.Timeout | null = null;
  /** The member's agents or what it applied changed: say so soon, once for a burst. */
  entryChanged = () => {
    if (entryTimer !== null || closed) return;
    entryTimer = setTimeout(() => {
      entryTimer = null;
      void beat(false).catch(() => undefined);
    }, 50);
    entryTimer.unref();
  };

  /** Keeps the members list live from the bucket: each beat, of this project only, bounded. */
  const watchMembers = async (kv: MembersKv) => {
    const seen = new Map<string, FleetMemberSeen & { heard: number }>();
    // A member silent past its time has left: the list drops it though the bucket said nothing.
    const live = () => {
      const now = Date.now();
      for (const [key, member] of seen) if (now - member.heard > MEMBER_TTL_MS) seen.delete(key);
      tell({ type: 'fleet.members', members: [...seen.values()].map(({ heard: _, ...m }) => m) });
    };
    const sweeping = setInterval(live, MEMBER_BEAT_MS);
    sweeping.unref();
    try {
      for await (const item of await kv.watch({ key: `${token}.*` })) {
        if (item.operation !== 'PUT') seen.delete(item.key);
        else {
          const member = parseMemberEntry(item.string());
          const heard = Date.parse(member?.seenAt ?? '');
          if (member !== null && (seen.has(item.key) || seen.size < 1000))
            seen.set(item.key, {
              ...member,
              heard: Number.isNaN(heard) ? Date.now() : Math.min(heard, Date.now()),
            });
        }
        live();
      }
    } finally {
      clearInterval(sweeping);
    }
  };

  let hearing: ConsumerMessages | null = null;
  let receiptSeq = 0;
  /** One receipt from the fleet, checked whole; it is shown, never acted on: no agent here is freed by it. */
  const hear = (msg: JsMsg) => {
    receiptSeq = msg.seq;
    if (!msg.subject.startsWith(`pulse.fleet.${token}.ack.`)) return;
    const receipt = parseFleetReceipt(msg.data, msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
    if (typeof receipt === 'string') {
      log.warn({ seq: msg.seq, subject: msg.subject }, `fleet: a receipt was refused: ${receipt}`);
      return;
    }
    tell({ type: 'fleet.receipt', receipt });
    log.info(
      { receiptId: receipt.receiptId, steerId: receipt.steerId, from: receipt.machine },
      'fleet: receipt heard',
    );
  };
  /** Hears every member's receipts of this project: those the stream keeps at first, then from the last heard. */
  const followReceipts = async (client: JetStreamClient) => {
    for (let attempt = 0; !closed; attempt++) {
      try {
        const consumer = await client.consumers.get(FLEET_STREAM, {
          filter_subjects: subjects.acks,
          ...(receiptSeq === 0
            ? { deliver_policy: DeliverPolicy.All }
            : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: receiptSeq + 1 }),
        });
        hearing = await consumer.consume();
        attempt = 0;
        for await (const msg of hearing) hear(msg);
      } catch (error) {
        if (!closed) log.warn({ error: String(error) }, 'fleet: hearing receipts failed; again soon');
      }
      hearing = null;
      if (!closed) await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt + 1)));
    }
  };

  const run = async () => {
    const connection = await connect(fleetConnectOptions(options, `pulse ${machine.name}`));
    if (closed) {
      await connection.close();
      return;
    }
    nc = connection;
    setConnection(true);
    void (async () => {
      for await (const event of connection.status()) {
        if (event.type === 'disconnect') setConnection(false);
        if (event.type === 'reconnect') {
          setConnection(true);
          void flush();
          // A restarted server may have lost the consumer: follow anew rather than wait on a dead one.
          void following?.close();
          void hearing?.close();
        }
      }
    })();
    const jsm = await jetstreamManager(connection);
    await jsm.streams.info(FLEET_STREAM).catch(() =>
      jsm.streams.add({
        name: FLEET_STREAM,
        subjects: [FLEET_SUBJECTS],
        max_msgs_per_subject: STEERS_KEPT,
        duplicate_window: nanos(10 * 60_000),
      }),
    );
    js = jetstream(connection);
    void flush();
    // The bucket forgets a member silent for three beats (an existing bucket is used as it is).
    const kv = await new Kvm(connection).create(MEMBERS_BUCKET, { history: 1, ttl: MEMBER_TTL_MS });
    members = kv;
    const beating = setInterval(() => void beat(true).catch(() => undefined), MEMBER_BEAT_MS);
    beating.unref();
    await beat(true).catch(() => undefined);
    void watchMembers(kv).catch(() => undefined);
    connection.closed().then(() => clearInterval(beating));
    void followReceipts(js);
    // Followed again from each subject's last steer after every reconnect or end: what was applied is skipped.
    for (let attempt = 0; !closed; attempt++) {
      try {
        const consumer = await js.consumers.get(FLEET_STREAM, {
          filter_subjects: subjects.steers,
          deliver_policy: DeliverPolicy.LastPerSubject,
        });
        following = await consumer.consume();
        log.info({ key }, 'fleet: following steers');
        attempt = 0;
        for await (const msg of following) await apply(msg);
      } catch (error) {
        if (!closed) log.warn({ error: String(error) }, 'fleet: following steers failed; again soon');
      }
      following = null;
      if (!closed) await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt + 1)));
    }
  };

  const running = (async () => {
    // The first connect waits for the server; what fails after it is retried with backoff.
    for (let attempt = 0; !closed; ) {
      try {
        await run();
        return;
      } catch (error) {
        if (closed) return;
        log.warn({ error: String(error) }, 'fleet: could not join; retrying');
        const step = joinBackoffStep(attempt, nc !== null);
        await (nc as NatsConnection | null)?.close().catch(() => undefined);
        nc = null;
        js = null;
        setConnection(false);
        await new Promise((resolve) => setTimeout(resolve, backoffMs(step)));
        attempt = step + 1;
      }
    }
  })();

  return {
    steered,
    async close() {
      closed = true;
      if (retry !== null) clearTimeout(retry);
      if (entryTimer !== null) clearTimeout(entryTimer);
      void following?.close();
      void hearing?.close();
      scans.unsubscribe();
      acks.unsubscribe();
      await flushing;
      await nc?.drain().catch(() => undefined);
      await running.catch(() => undefined);
      await store.save();
    },
  };
};

/** A project's running fleet member. */
export type FleetMember = ReturnType<typeof startFleetMember>;
