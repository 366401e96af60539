/** One project the daemon serves: its id (also its child's id, `project:<id>` in the system) and folder. */
export interface ServedEntry {
  id: string;
  root: string;
}

export interface DaemonContext {
  /** The projects served, in the order they were added (and are closed). */
  projects: ServedEntry[];
}

export type DaemonEvent =
  | { type: 'project.add'; id: string; root: string }
  | { type: 'project.remove'; id: string };

/** The system id of a project's child actor. */
export const projectSystemId = (id: string) => `project:${id}`;
