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
import { alreadyApplied, isLocalEdit } from '../../machines/fleet-decisions.js';
import type { PulseActor } from '../../machines/pulse.js';
import type { SteerFile, SteerRequest, SteerWritten } from '../../machines/steer-context.js';
import { readBoundedText } from '../store/read-bounded.js';
import { STEER_LIMIT, steeredText, steerPath } from '../store/steer-file.js';
import { lookUp, systemOf } from '../system/actors.js';
import { askSteer, logOf } from '../system/ask-actors.js';
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
import { fleetMachine, openFleetState } from './fleet-state.js';

/** The KV bucket of members: `<project token>.<machine id>` → who serves the project, seen when. */
const MEMBERS_BUCKET = 'pulse_fleet_members';
/** How often a member says it is there. */
const MEMBER_BEAT_MS = 15_000;
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
  for (const steer of store.state.outbox) remember(steer.file, steer.sha256);
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
        const steer = store.state.outbox[0]!;
        try {
          await js.publish(subjects.steer(steer.file), JSON.stringify(steer), {
            msgID: steer.steerId,
            timeout: 5000,
          });
        } catch (error) {
          log.warn(
            { steerId: steer.steerId, error: String(error) },
            'fleet: a steer could not be sent yet; kept',
          );
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
  const lastSeen = new Map<SteerFile, string | null>();
  const scanned = () => {
    const { files } = logOf(actor).getSnapshot().context;
    for (const file of FILES) {
      const tracked = files[`${file}.md`];
      const before = lastSeen.get(file);
      lastSeen.set(file, tracked.sha256);
      if (!isLocalEdit(tracked.sha256, before, recent.get(file)!)) continue;
      if (!tracked.truncated && tracked.text !== null) void publish(file, tracked.text);
    }
  };
  scanned();
  const scans = logOf(actor).subscribe(scanned);

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
    // The file will hold the text as the steer writer normalises it: neither hash is a local edit.
    remember(steer.file, steer.sha256);
    remember(steer.file, sha256(steeredText(null, steer.text, 'replace')));
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
    await store.save();
    log.info(
      { file: steer.file, steerId: steer.steerId, seq: msg.seq, from, pending: msg.info.pending },
      msg.info.pending === 0 ? 'fleet: steer applied; caught up' : 'fleet: steer applied',
    );
  };

  type MembersKv = Awaited<ReturnType<Kvm['create']>>;
  const beat = (kv: MembersKv) =>
    kv.put(
      `${token}.${machine.id}`,
      JSON.stringify({ machine: status.machine, at: new Date().toISOString() }),
    );

  /** Keeps the members list live from the bucket: each beat, of this project only, bounded. */
  const watchMembers = async (kv: MembersKv) => {
    const seen = new Map<string, FleetMemberSeen>();
    for await (const entry of await kv.watch({ key: `${token}.*` })) {
      if (entry.operation !== 'PUT') seen.delete(entry.key);
      else {
        const value = (() => {
          try {
            return JSON.parse(entry.string()) as { machine?: unknown; at?: unknown };
          } catch {
            return {};
          }
        })();
        if (typeof value.machine === 'string' && typeof value.at === 'string' && seen.size < 1000)
          seen.set(entry.key, { machine: value.machine.slice(0, 100), seenAt: value.at.slice(0, 40) });
      }
      tell({ type: 'fleet.members', members: [...seen.values()] });
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
    const kv = await new Kvm(connection).create(MEMBERS_BUCKET, { history: 1 });
    const beating = setInterval(() => void beat(kv).catch(() => undefined), MEMBER_BEAT_MS);
    beating.unref();
    await beat(kv).catch(() => undefined);
    void watchMembers(kv).catch(() => undefined);
    connection.closed().then(() => clearInterval(beating));
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
    for (let attempt = 0; !closed; attempt++) {
      try {
        await run();
        return;
      } catch (error) {
        if (closed) return;
        log.warn({ error: String(error) }, 'fleet: could not join; retrying');
        await (nc as NatsConnection | null)?.close().catch(() => undefined);
        nc = null;
        js = null;
        setConnection(false);
        await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
      }
    }
  })();

  return {
    steered,
    async close() {
      closed = true;
      if (retry !== null) clearTimeout(retry);
      void following?.close();
      scans.unsubscribe();
      await flushing;
      await nc?.drain().catch(() => undefined);
      await running.catch(() => undefined);
      await store.save();
    },
  };
};

/** A project's running fleet member. */
export type FleetMember = ReturnType<typeof startFleetMember>;
