/**
 * The bundle's loader (scripts/bundle-loader.ts) compiles pulse with V8's code cache and writes
 * the cache once the code an agent's first calls need has run: the daemon says when, with this
 * event on `process`. Run unbundled, nothing listens.
 */
export const CODE_WARM_EVENT = 'pulse:code-warm';

/** The daemon has served its first MCP request, or is stopping: its compiled code is worth caching. */
export const announceCodeWarm = (): void => {
  (process as NodeJS.EventEmitter).emit(CODE_WARM_EVENT);
};
