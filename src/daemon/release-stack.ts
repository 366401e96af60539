/** What a start acquired so far, each with its release, registered as it is acquired. */
export interface ReleaseStack {
  /** Registers the release of what was just acquired. */
  defer(release: () => unknown): void;
  /** Releases everything registered, newest first, each even if one before it failed; once. */
  release(): Promise<void>;
}

/** An empty stack: Node 20 has no `AsyncDisposableStack`, and this is all of it the daemon needs. */
export const createReleaseStack = (): ReleaseStack => {
  const releases: (() => unknown)[] = [];
  let releasing: Promise<void> | null = null;
  return {
    defer: (release) => {
      releases.push(release);
    },
    release: () => {
      releasing ??= (async () => {
        for (const release of releases.reverse()) {
          await Promise.resolve()
            .then(release)
            .catch(() => undefined);
        }
      })();
      return releasing;
    },
  };
};
