import { assign, setup } from 'xstate';
import type { FleetContext, FleetEvent } from './fleet-context.js';
import { withChange, withReceipt } from './fleet-decisions.js';

/**
 * This project's place in the fleet, as its member (src/fleet/fleet-member.ts) reports it: the
 * connection, the members and their agents, the last steer applied to each file, what waits to
 * be sent, and the changes with every member's receipts. It
 * decides nothing that writes: the member writes through the steer actor, as any steer.
 */
export const fleetMachine = setup({
  types: { context: {} as FleetContext, events: {} as FleetEvent, input: {} as FleetContext },
  guards: { refused: ({ context }) => context.refused !== null },
  actions: {
    since: assign((_, at: string) => ({ since: at })),
    members: assign((_, members: FleetContext['members']) => ({ members })),
    applied: assign(({ context }, { file, applied }: Extract<FleetEvent, { type: 'fleet.applied' }>) => ({
      applied: { ...context.applied, [file]: applied },
    })),
    unsent: assign((_, unsent: number) => ({ unsent })),
    change: assign(({ context }, change: Extract<FleetEvent, { type: 'fleet.change' }>['change']) => ({
      changes: withChange(context.changes, change),
    })),
    receipt: assign(({ context }, receipt: Extract<FleetEvent, { type: 'fleet.receipt' }>['receipt']) => ({
      receipts: withReceipt(context.receipts, receipt),
    })),
  },
}).createMachine({
  id: 'fleet',
  context: ({ input }) => input,
  initial: 'joining',
  on: {
    'fleet.members': { actions: { type: 'members', params: ({ event }) => event.members } },
    'fleet.applied': { actions: { type: 'applied', params: ({ event }) => event } },
    'fleet.unsent': { actions: { type: 'unsent', params: ({ event }) => event.unsent } },
    'fleet.change': { actions: { type: 'change', params: ({ event }) => event.change } },
    'fleet.receipt': { actions: { type: 'receipt', params: ({ event }) => event.receipt } },
  },
  states: {
    joining: {
      description: 'Connecting to the fleet for the first time; steering goes on locally meanwhile.',
      always: { guard: 'refused', target: 'refused' },
      on: {
        'fleet.connected': {
          target: 'connected',
          actions: { type: 'since', params: ({ event }) => event.at },
        },
      },
    },
    connected: {
      description: 'Following this project’s steers and sending its own.',
      on: {
        'fleet.disconnected': {
          target: 'disconnected',
          actions: { type: 'since', params: ({ event }) => event.at },
        },
      },
    },
    disconnected: {
      description:
        'The server is gone: steering goes on locally, changes wait on disk, the client retries with backoff.',
      on: {
        'fleet.connected': {
          target: 'connected',
          actions: { type: 'since', params: ({ event }) => event.at },
        },
      },
    },
    refused: {
      description:
        'The project stays out of the fleet (no remote, or a name the user did not allow); the reason is shown.',
    },
  },
});
