/** Lines of one server's stderr logged per second at most; a flood past it is counted, not logged. */
const LINES_PER_SECOND = 20;

/**
 * A per-server budget for logging source servers' stderr: a server that floods it would
 * otherwise keep the daemon busy formatting and writing log lines, and slow every agent's call.
 * Past the budget, lines are dropped and one line says how many, when the next second begins.
 */
export const createStderrBudget = ({ limit = LINES_PER_SECOND, now = Date.now } = {}) => {
  const windows = new Map<string, { start: number; logged: number; dropped: number }>();
  return function logWithinBudget(server: string, line: string, log: (line: string) => void): void {
    const time = now();
    let window = windows.get(server);
    if (window === undefined || time - window.start >= 1000) {
      if (window !== undefined && window.dropped > 0) {
        log(`(${window.dropped} more stderr lines not logged: over ${limit} a second)`);
      }
      window = { start: time, logged: 0, dropped: 0 };
      windows.set(server, window);
    }
    if (window.logged < limit) {
      window.logged++;
      log(line);
    } else {
      window.dropped++;
    }
  };
};
