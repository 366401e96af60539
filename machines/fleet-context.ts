/** The two files a fleet carries (as `SteerFile`, kept here so the chart imports no effect). */
export type FleetFile = 'guidance' | 'constraints';

/** The last fleet steer a member applied to one file: its stream sequence, id, hash and origin. */
export interface AppliedSteer {
  seq: number;
  steerId: string;
  sha256: string;
  machine: string;
}

/** One member of the fleet project, as its last beat said. */
export interface FleetMemberSeen {
  machine: string;
  seenAt: string;
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
  /** Steers made here the fleet has not stored yet. */
  unsent: number;
}

/** What the fleet member (src/fleet) tells its actor. */
export type FleetEvent =
  | { type: 'fleet.connected'; at: string }
  | { type: 'fleet.disconnected'; at: string }
  | { type: 'fleet.members'; members: FleetMemberSeen[] }
  | { type: 'fleet.applied'; file: FleetFile; applied: AppliedSteer }
  | { type: 'fleet.unsent'; unsent: number };
