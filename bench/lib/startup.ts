import { type PulseCommand, startDaemon } from './daemon.js';
import { readProcessCpuMs, readProcessMemory } from './process-usage.js';
import { readSchedStat } from './sched-stat.js';
import { connectSession, expectAdopted, shouldInterrupt } from './session.js';

/** One cold start of the daemon on a project. */
export interface StartupSample {
  /** spawn() → `MCP endpoint:` printed. */
  endpointMs: number;
  /** spawn() → first `pulse_should_interrupt` answered, over a new session. */
  firstCallMs: number;
  /** CPU time the daemon had used when its first call was answered; null off Linux. */
  cpuMs: number | null;
  /** The daemon's main thread at that answer: time on a CPU and time runnable but waiting for one (`/proc/<pid>/schedstat`); null off Linux. */
  mainThread: { runMs: number; waitMs: number } | null;
  /** Resident memory read as soon as `MCP endpoint:` was read; null off Linux. */
  rssAtEndpoint: number | null;
  /** The same once the first call was answered (the MCP SDK loads at the first /mcp request). */
  rssAfterFirstCall: number | null;
}

/** Starts a daemon, times it to its endpoint and to its first answered call, then stops it. */
export const measureStartup = async (
  project: string,
  latestEventId: string | null,
  command?: PulseCommand,
): Promise<StartupSample> => {
  const daemon = await startDaemon(project, command === undefined ? {} : { command });
  const rssAtEndpoint = (await readProcessMemory(daemon.pid))?.rss ?? null;
  try {
    const client = await connectSession(daemon.url);
    try {
      const answer = await shouldInterrupt(client, latestEventId);
      const firstCallMs = performance.now() - daemon.spawnedAt;
      const cpuMs = await readProcessCpuMs(daemon.pid);
      const mainThread = await readSchedStat(daemon.pid);
      const rssAfterFirstCall = (await readProcessMemory(daemon.pid))?.rss ?? null;
      expectAdopted(answer, latestEventId);
      return {
        endpointMs: daemon.endpointMs,
        firstCallMs,
        cpuMs,
        mainThread,
        rssAtEndpoint,
        rssAfterFirstCall,
      };
    } finally {
      await client.close();
    }
  } finally {
    await daemon.stop();
  }
};
