/** The two files a fleet carries (as `SteerFile`, kept here so the chart imports no effect). */
export type FleetFile = 'guidance' | 'constraints';

/** The last fleet steer a member applied to one file: its stream sequence, id, hash and origin. */
export interface AppliedSteer {
  seq: number;
  steerId: string;
  sha256: string;
  machine: string;
}

/** An agent of a member, as that member's entry says: who, and the fleet steer it still owes, if any. */
export interface FleetAgentSeen {
  /** Its id on its member (opaque). */
  agent: string;
  /** `Claude Code 2.1.332 (session 3f2a9c01…)`, as that member's `pulse status` names it. */
  label: string;
  /** The steer it owes an ack (its fleet id), or null. */
  owes: string | null;
  /** That steer's stream sequence, or null while the stream has not stored it. */
  owesSeq: number | null;
}

/** One member of the fleet project, as its last entry said. */
export interface FleetMemberSeen {
  machine: string;
  seenAt: string;
  /** Its agents, each with what it owes; [] when it said none. */
  agents: FleetAgentSeen[];
  /** The stream sequence of the last steer it applied or sent, per file. */
  applied: Partial<Record<FleetFile, number>>;
}

/** One change the fleet carried, as this member knows it: the steer, and its own event for it. */
export interface FleetChange {
  steerId: string;
  file: FleetFile;
  /** Its stream sequence, or null while the stream has not stored it (a steer made here, kept to send). */
  seq: number | null;
  /** The member it came from. */
  machine: string;
  at: string;
  /** This member's event for it, once its log holds one. */
  eventId: string | null;
}

/** An agent's ack of a fleet change, as its member published it: data from another machine, bounded and clean. */
export interface FleetReceiptSeen {
  receiptId: string;
  /** The change acknowledged (its fleet id). */
  steerId: string;
  machine: string;
  agent: string;
  label: string;
  at: string;
  plan_changed: boolean;
  added: number;
  removed: number;
  summary: string;
  diff: string | null;
}

/** What the fleet actor knows of this project's place in the fleet; never a credential. */
export interface FleetContext {
  /** The servers, credentials in a URL shown as `***`. */
  server: string;
  /** How it authenticates, without the secret (`creds file`, `user alice`). */
  auth: string;
  /** The fleet project key (`git:github.com/acme/widget`), or null while refused. */
  key: string | null;
  /** This member (`laptop (3f2a9c01b2c3)`). */
  machine: string;
  /** Why the project stays out of the fleet, or null. */
  refused: string | null;
  /** Since when the connection is as the state says (ISO). */
  since: string;
  members: FleetMemberSeen[];
  applied: Partial<Record<FleetFile, AppliedSteer>>;
  /** Steers and receipts made here the fleet has not stored yet. */
  unsent: number;
  /** The latest changes, oldest first (`CHANGES_KEPT`). */
  changes: FleetChange[];
  /** The receipts heard for those changes, from every member, oldest first (`RECEIPTS_KEPT`). */
  receipts: FleetReceiptSeen[];
}

/** Changes a member keeps. */
export const CHANGES_KEPT = 32;
/** Receipts a member keeps, in all. */
export const RECEIPTS_KEPT = 500;

/** What the fleet member (src/fleet) tells its actor. */
export type FleetEvent =
  | { type: 'fleet.connected'; at: string }
  | { type: 'fleet.disconnected'; at: string }
  | { type: 'fleet.members'; members: FleetMemberSeen[] }
  | { type: 'fleet.applied'; file: FleetFile; applied: AppliedSteer }
  | { type: 'fleet.unsent'; unsent: number }
  | { type: 'fleet.change'; change: FleetChange }
  | { type: 'fleet.receipt'; receipt: FleetReceiptSeen };
