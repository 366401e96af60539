// What pulse says of its state in words, written once for the status assembly, `pulse status`,
// the status page's cards and the activity log; it imports nothing, so the page's script bundles it.

/** What a sources.json error means for the pollers: whether an earlier good config keeps them running. */
export const configErrorEffect = (keepsLastGood: boolean): string =>
  keepsLastGood ? 'the last good config keeps running' : 'no source runs until it is fixed';

/** Why a source with `"enabled": false` does not run. */
export const DISABLED_IN_FILE = '"enabled": false in sources.json';

/** What pulse does instead while the `.pulse/` watch is down. */
const pollingInstead = (pollEverySec: number) =>
  `its files are polled every ${pollEverySec} s until it works again`;

/** What `/healthz`, `pulse status` and the status page say while the `.pulse/` watch is down, given why. */
export const watchDownWarning = (down: string, pollEverySec: number): string =>
  `the .pulse/ watch failed (${down}): ${pollingInstead(pollEverySec)}`;

/** What the activity log says once as the `.pulse/` watch goes down (why is in its fields). */
export const watchFailedNotice = (pollEverySec: number): string =>
  `the .pulse/ watch failed: ${pollingInstead(pollEverySec)}`;
