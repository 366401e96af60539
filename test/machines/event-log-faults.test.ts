import { describe, expect, it } from 'vitest';
import {
  type ActorRefFrom,
  type ActorSystem,
  createActor,
  fromCallback,
  fromPromise,
  SimulatedClock,
  setup,
  waitFor,
} from 'xstate';
import { EventIndex } from '../../machines/event-index.js';
import { eventLogMachine } from '../../machines/event-log.js';
import type { LoadedJournal, ReconcileInput, ReconcileOutput } from '../../machines/event-log-context.js';
import { UNKNOWN_PLAN } from '../../machines/plan-diff.js';
import { type AckRecord, untrackedFiles } from '../../machines/pulse-files.js';
import type { AckAnswer, AckReply } from '../../machines/replan-context.js';
import type { Reply } from '../../machines/reply.js';
import { nothingFound } from '../support/reconcile-output.js';

/*
 * The event log's faults, with the effects provided as fakes and time simulated: what
 * it tells the replan lifecycle, when it looks again by itself, and how an ack that could not be
 * written stands in memory and is written again.
 */

const LOOP = 'is a symlink loop (ELOOP): replace it with a regular file';
const ACK: AckRecord = { eventId: 'evt_1', planSha256: null, at: '2026-12-01T00:00:00Z' };

const start = ({
  scan = nothingFound,
  saveReplan = async () => {},
  unchanged = () => true,
}: {
  scan?: (input: ReconcileInput) => ReconcileOutput;
  saveReplan?: () => Promise<void>;
  unchanged?: () => boolean;
}) => {
  const clock = new SimulatedClock();
  const told: unknown[] = [];
  const inputs: ReconcileInput[] = [];
  const loaded: LoadedJournal = {
    index: EventIndex.empty(),
    ack: null,
    agents: [],
    acks: [],
    plan: UNKNOWN_PLAN,
    loadedAt: 0,
    files: untrackedFiles(),
    warnings: [],
  };
  const log = eventLogMachine.provide({
    actors: {
      loadJournal: fromPromise(async () => loaded),
      reconcileFiles: fromPromise(async ({ input }) => {
        inputs.push(input);
        return scan(input);
      }),
      saveReplan: fromPromise(saveReplan),
    },
    guards: { filesUnchanged: unchanged },
  });
  const replan = fromCallback(({ receive }) => {
    receive((event) => {
      if (event.type === 'log.faults') told.push(event);
    });
  });
  const root = createActor(
    setup({ actors: { log, replan } }).createMachine({
      invoke: [
        { src: 'replan', systemId: 'replan' },
        { src: 'log', id: 'log', systemId: 'log' },
      ],
    }),
    { clock },
  ).start();
  const system: ActorSystem<{ actors: { log: ActorRefFrom<typeof eventLogMachine> } }> = root.system;
  const ref = system.get('log')!;
  const idle = () => waitFor(ref, (s) => s.matches({ ready: { scan: 'idle' } }));
  return { clock, ref, told, inputs, idle };
};

describe('the event log and what it cannot see or record', () => {
  it('tells the replan lifecycle when guidance can no longer be seen, and again only when that changes', async () => {
    let unreadable: ReconcileOutput['unreadable'] = { 'guidance.md': LOOP };
    const { ref, told, idle } = start({ scan: (input) => ({ ...nothingFound(input), unreadable }) });
    await idle();
    expect(told).toEqual([{ type: 'log.faults', blind: [{ file: '.pulse/guidance.md', reason: LOOP }] }]);
    ref.send({ type: 'log.reconcile' });
    await idle();
    expect(told, 'the same fault again is no news').toHaveLength(1);
    unreadable = { 'task.md': LOOP };
    ref.send({ type: 'log.reconcile' });
    await idle();
    expect(told.at(-1), 'task.md hides no guidance: the hold is lifted').toEqual({
      type: 'log.faults',
      blind: [],
    });
    expect(ref.getSnapshot().context.faults.unreadable).toEqual({ 'task.md': LOOP });
  });

  it('scans by itself a second after a fault, never skips a caller’s scan while one holds, and stops once all is well', async () => {
    let faults = 1;
    const { clock, ref, inputs, idle } = start({
      scan: (input) => ({ ...nothingFound(input), unreadable: faults > 0 ? { 'guidance.md': LOOP } : {} }),
    });
    await idle();
    expect(inputs).toHaveLength(1);
    ref.send({ type: 'log.reconcile' });
    await idle();
    expect(inputs, 'the files look unchanged, but a fault holds: scanned').toHaveLength(2);
    clock.increment(999);
    expect(inputs).toHaveLength(2);
    clock.increment(1);
    await idle();
    expect(inputs, 'looked again by itself').toHaveLength(3);
    faults = 0;
    clock.increment(1000);
    await idle();
    expect(inputs).toHaveLength(4);
    clock.increment(5000);
    ref.send({ type: 'log.reconcile' });
    expect(inputs, 'all well: no scan on the clock, and still files answer at once').toHaveLength(4);
  });

  it('asks for the hashes again after state.json could not take them, until a write lands', async () => {
    let stateError: string | null = 'ENOSPC: no space left on device';
    const { clock, ref, inputs, idle } = start({
      scan: (input) => ({
        ...nothingFound(input),
        hashesSaved: input.saveHashes || inputs.length === 1 ? stateError === null : null,
        stateError,
      }),
    });
    await idle();
    expect(ref.getSnapshot().context).toMatchObject({ hashesUnsaved: true });
    expect(ref.getSnapshot().context.faults.state).toMatch(/^cannot be written \(ENOSPC/);
    stateError = null;
    clock.increment(1000);
    await idle();
    expect(inputs.at(-1)!.saveHashes).toBe(true);
    expect(ref.getSnapshot().context).toMatchObject({ hashesUnsaved: false, faults: { state: null } });
  });

  it('keeps an ack it could not write, says so for that request, writes it again after a second, and clears the fault', async () => {
    let writes = 0;
    const { clock, ref, idle } = start({
      saveReplan: async () => {
        writes++;
        if (writes === 1) throw new Error('ENOSPC: no space left on device');
      },
    });
    await idle();
    const heard: Reply<AckAnswer>[] = [];
    const replyTo = createActor(
      fromCallback<Reply<AckAnswer>>(({ receive }) => receive((r) => heard.push(r))),
    );
    replyTo.start();
    const reply: AckReply = {
      accepted: true,
      acknowledged_event_id: ACK.eventId,
      plan_sha256: null,
      reason: 'Replan acknowledged.',
    };
    ref.send({
      type: 'replan.record',
      ack: ACK,
      agents: [],
      acks: [],
      answers: { asking: { requestId: 7, replyTo }, reply },
    });
    const failed = await waitFor(ref, (s) => s.matches({ ready: { ack: 'retrying' } }));
    expect(heard, 'the ack is answered accepted, not durable, and why').toEqual([
      {
        type: 'reply',
        requestId: 7,
        answer: {
          ...reply,
          durable: false,
          warning: expect.stringMatching(
            /^Accepted, but not yet written to \.pulse\/state\.json \(ENOSPC: no space left on device\): pulse keeps the ack in memory/,
          ),
        },
      },
    ]);
    expect(failed.context.ack).toEqual(ACK);
    expect(failed.context.faults.state).toMatch(/^cannot be written \(ENOSPC/);
    clock.increment(1000);
    const saved = await waitFor(ref, (s) => s.matches({ ready: { ack: 'idle' } }));
    expect(heard, 'an ack is answered once, never again at the retry').toHaveLength(1);
    replyTo.stop();
    expect(saved.context.faults.state).toBeNull();
    expect(saved.matches({ ready: { ack: 'idle' } })).toBe(true);
  });
});
