/** What `loadFocus` resolves to: the focus end (ms epoch; null = no focus) and when it was read. */
export interface LoadedFocus {
  until: number | null;
  now: number;
}

export interface FocusContext {
  /** The focus end last read; kept as it was while the file is broken. */
  until: number | null;
  lastError: string | null;
  loads: number;
}

export type FocusEvent = { type: 'focus.changed' };
