import type { ChildProcess } from 'node:child_process';

/** Windows has no process groups to signal: there only the spawned process is. */
export const HAS_PROCESS_GROUPS = process.platform !== 'win32';

/** How often a group is probed while it is given time to exit (no event tells when a grandchild exits). */
const PROBE_MS = 20;

// Groups not yet seen gone. Detached from our own, they no longer get the terminal's SIGINT or
// SIGHUP; should the daemon exit before it ended them (its shutdown limit, a fatal error), the
// exit hook kills them with it.
const live = new Set<ProcessGroup>();
const killLeftovers = () => {
  for (const group of live) group.kill();
};

/** The process group a spawned server leads: the server and everything it started that stayed in it. */
export class ProcessGroup {
  readonly #child: ChildProcess;
  readonly #pid: number;

  constructor(child: ChildProcess & { pid: number }) {
    this.#child = child;
    this.#pid = child.pid;
    if (live.size === 0) process.once('exit', killLeftovers);
    live.add(this);
  }

  /** Signals every process of the group (0 only probes); false when none is left. */
  signal(signal: NodeJS.Signals | 0): boolean {
    // Once seen gone, never signalled again: its number may be another process's by now.
    if (!live.has(this)) return false;
    let reached = false;
    try {
      if (HAS_PROCESS_GROUPS) {
        process.kill(-this.#pid, signal);
        reached = true;
      } else if (this.#child.exitCode === null && this.#child.signalCode === null) {
        if (signal !== 0) this.#child.kill(signal);
        reached = true;
      }
    } catch {
      // ESRCH: the group is gone.
    }
    if (!reached) this.#forget();
    return reached;
  }

  /** Waits up to `ms` (less once `cutShort` says so) for every process of the group to exit; true when none is left. */
  async exited(ms: number, cutShort = () => false): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (this.signal(0)) {
      if (cutShort() || Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
    }
    return true;
  }

  /** SIGKILL to every process of the group; it is forgotten then, as none can outlive that. */
  kill(): void {
    this.signal('SIGKILL');
    this.#forget();
  }

  #forget() {
    live.delete(this);
    if (live.size === 0) process.off('exit', killLeftovers);
  }
}
