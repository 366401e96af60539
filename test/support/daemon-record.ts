import { type DaemonRecord, type Discovery, readDaemonRecord } from '../../src/store/daemon-record.js';

/** This user's daemon record of a project, as the daemon wrote it, or null when there is none. */
export const daemonRecord = (project: string): DaemonRecord | null => {
  const read = readDaemonRecord(project);
  return read !== null && 'record' in read ? read.record : null;
};

/** Where the daemon serving a project says it serves; throws when no record says so. */
export const recordedDaemon = (project: string): Discovery => {
  const record = daemonRecord(project);
  if (typeof record?.url !== 'string')
    throw new Error(`No daemon record serves ${project}: ${JSON.stringify(record)}`);
  return record as Discovery;
};
