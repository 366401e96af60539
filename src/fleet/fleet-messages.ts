import { createHash } from 'node:crypto';
import type { SteerFile } from '../../machines/steer-context.js';
import { STEER_LIMIT } from '../store/steer-file.js';

/** The one JetStream stream of a fleet; every member uses the same. */
export const FLEET_STREAM = 'PULSE_FLEET';

/** Every subject of the fleet: `pulse.fleet.<project>.<kind>.<…>`. */
export const FLEET_SUBJECTS = 'pulse.fleet.>';

/** Steers kept per file and project, for history and a late member's catch-up (it takes the last). */
export const STEERS_KEPT = 64;

/** A fleet project key's subject token: a hash, so no repository name or URL shapes a subject. */
export const projectToken = (key: string): string =>
  createHash('sha256').update(key).digest('hex').slice(0, 32);

/** The subjects of one fleet project. */
export const projectSubjects = (key: string) => {
  const prefix = `pulse.fleet.${projectToken(key)}`;
  return {
    steer: (file: SteerFile) => `${prefix}.steer.${file}`,
    steers: `${prefix}.steer.*`,
    ack: (machineId: string) => `${prefix}.ack.${machineId}`,
    acks: `${prefix}.ack.*`,
  };
};

/** A member as messages name it: its id (a subject token) and its name (the host it runs on). */
export interface FleetMachine {
  id: string;
  name: string;
}

/** One steer published to the fleet: the file's whole text after the change, and where it came from. */
export interface FleetSteer {
  v: 1;
  kind: 'steer';
  /** Unique per steer; the JetStream message id, so a resend is stored once. */
  steerId: string;
  file: SteerFile;
  text: string;
  sha256: string;
  machine: FleetMachine;
  at: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A steer of `text` for `file` from `machine`. */
export const fleetSteer = (
  machine: FleetMachine,
  file: SteerFile,
  text: string,
  steerId: string,
  at: string,
): FleetSteer => ({ v: 1, kind: 'steer', steerId, file, text, sha256: sha256(text), machine, at });

/** `machine.name (machine.id)`, as logs and status show a member. */
export const machineLabel = (machine: FleetMachine): string => `${machine.name} (${machine.id})`;

/** A member's id: a subject token. */
export const MACHINE_ID = /^[a-z0-9]{8,32}$/;
/** A steer's or receipt's id: a JetStream message id. */
export const STEER_ID = /^[A-Za-z0-9_.-]{1,80}$/;

/** A message's machine, or null when it is not one: an id that is a subject token, a host name. */
export const parseMachine = (value: unknown): FleetMachine | null => {
  const machine = value as Partial<FleetMachine> | undefined;
  return typeof machine?.id === 'string' &&
    MACHINE_ID.test(machine.id) &&
    typeof machine.name === 'string' &&
    /^[\w.-]{1,64}$/.test(machine.name)
    ? { id: machine.id, name: machine.name }
    : null;
};

/**
 * A steer from the fleet, or why it is refused: data from other machines, checked whole (its
 * subject's file, text within what agents read, its hash, the names it shows) before anything is written.
 */
export const parseFleetSteer = (data: Uint8Array, subjectFile: string): FleetSteer | string => {
  if (data.length > STEER_LIMIT * 2 + 4096) return 'too large';
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data));
  } catch {
    return 'not JSON';
  }
  const m = value as Partial<FleetSteer> | null;
  if (typeof m !== 'object' || m === null || m.v !== 1 || m.kind !== 'steer') return 'not a steer';
  if (m.file !== 'guidance' && m.file !== 'constraints') return 'not guidance or constraints';
  if (m.file !== subjectFile) return 'its file differs from its subject';
  if (typeof m.text !== 'string' || m.text.trim() === '' || Buffer.byteLength(m.text) > STEER_LIMIT)
    return 'its text is empty or over what agents read whole';
  if (m.sha256 !== sha256(m.text)) return 'its hash does not match its text';
  if (typeof m.steerId !== 'string' || !STEER_ID.test(m.steerId)) return 'its steer id is malformed';
  const machine = parseMachine(m.machine);
  if (machine === null) return 'its machine is malformed';
  if (typeof m.at !== 'string' || m.at.length > 40) return 'its time is malformed';
  return {
    v: 1,
    kind: 'steer',
    steerId: m.steerId,
    file: m.file,
    text: m.text,
    sha256: m.sha256,
    machine: { id: machine.id, name: machine.name },
    at: m.at,
  };
};
