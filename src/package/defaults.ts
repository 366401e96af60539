/** The port `pulse start` serves on, and that `pulse setup` points agents at, unless told otherwise. */
export const DEFAULT_PORT = 8765;
