import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { AppliedSteer } from '../../machines/fleet-context.js';
import type { SteerFile } from '../../machines/steer-context.js';
import { ensureUserState } from '../os/user-state.js';
import { replaceFile } from '../store/replace-file.js';
import type { FleetMachine, FleetSteer } from './fleet-messages.js';
import type { FleetReceipt } from './fleet-receipts.js';

/** What a member keeps of one fleet project across restarts, in the user's state folder. */
export interface FleetState {
  applied: Partial<Record<SteerFile, AppliedSteer>>;
  /** Steers and receipts made here and not yet stored by the fleet, oldest first: sent on (re)connect. */
  outbox: (FleetSteer | FleetReceipt)[];
  /** The hash each file held at the member's last scan: a different one at start is an edit made while it was down. */
  seen: Partial<Record<SteerFile, string>>;
}

const readJson = (path: string): unknown => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
};

/**
 * This account's name in the fleet, made once and kept in the user's state folder: the host name
 * and a random id, so two accounts (or two HOMEs) on one host are two members.
 */
export const fleetMachine = (): FleetMachine => {
  const path = join(ensureUserState('fleet'), 'machine.json');
  const kept = readJson(path) as Partial<FleetMachine> | null;
  if (typeof kept?.id === 'string' && /^[a-z0-9]{8,32}$/.test(kept.id) && typeof kept.name === 'string')
    return { id: kept.id, name: kept.name };
  const name =
    hostname()
      .replace(/[^\w.-]/g, '-')
      .slice(0, 64) || 'host';
  const machine = { id: randomBytes(6).toString('hex'), name };
  void replaceFile(path, `${JSON.stringify(machine)}\n`);
  return machine;
};

/** The member's durable state for one project (`<state>/fleet/<project id>.json`), saved atomically. */
export const openFleetState = (projectId: string) => {
  const path = join(ensureUserState('fleet'), `${projectId}.json`);
  const kept = readJson(path) as Partial<FleetState> | null;
  const state: FleetState = {
    applied: typeof kept?.applied === 'object' && kept.applied !== null ? kept.applied : {},
    outbox: Array.isArray(kept?.outbox) ? kept.outbox : [],
    seen: typeof kept?.seen === 'object' && kept.seen !== null ? kept.seen : {},
  };
  let saving = Promise.resolve();
  return {
    path,
    state,
    /** Writes the state as it is now, after any save in progress. */
    save(): Promise<void> {
      const text = `${JSON.stringify(state)}\n`;
      saving = saving.then(() => replaceFile(path, text));
      return saving;
    },
  };
};

/** A member's durable state. */
export type FleetStateFile = ReturnType<typeof openFleetState>;
