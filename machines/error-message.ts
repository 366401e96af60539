/** The text of a failure, for `lastError`-style context fields: failures are data, never thrown. */
export const errorMessage = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
