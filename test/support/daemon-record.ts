import { type DaemonRecord, type Discovery, readDaemonRecord } from '../../src/store/daemon-record.js';

/** This user's daemon record of a project (of the user whose HOME `env` names), or null when there is none. */
export const daemonRecord = (project: string, env: NodeJS.ProcessEnv = process.env): DaemonRecord | null => {
  const read = readDaemonRecord(project, env);
  return read !== null && 'record' in read ? read.record : null;
};

/** Where the daemon serving a project says it serves; throws when no record says so. */
export const recordedDaemon = (project: string, env: NodeJS.ProcessEnv = process.env): Discovery => {
  const record = daemonRecord(project, env);
  if (typeof record?.url !== 'string')
    throw new Error(`No daemon record serves ${project}: ${JSON.stringify(record)}`);
  return record as Discovery;
};
