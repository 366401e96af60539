import { startDaemon } from './daemon.js';
import { readProcessCpuMs } from './process-usage.js';
import { connectSession, expectAdopted, shouldInterrupt } from './session.js';

/** One cold start of the daemon on a project. */
export interface StartupSample {
  /** spawn() → `MCP endpoint:` printed. */
  endpointMs: number;
  /** spawn() → first `pulse_should_interrupt` answered, over a new session. */
  firstCallMs: number;
  /** CPU time the daemon had used when its first call was answered; null off Linux. */
  cpuMs: number | null;
}

/** Starts a daemon, times it to its endpoint and to its first answered call, then stops it. */
export const measureStartup = async (
  project: string,
  latestEventId: string | null,
): Promise<StartupSample> => {
  const daemon = await startDaemon(project);
  try {
    const client = await connectSession(daemon.url);
    try {
      const answer = await shouldInterrupt(client, latestEventId);
      const firstCallMs = performance.now() - daemon.spawnedAt;
      const cpuMs = await readProcessCpuMs(daemon.pid);
      expectAdopted(answer, latestEventId);
      return { endpointMs: daemon.endpointMs, firstCallMs, cpuMs };
    } finally {
      await client.close();
    }
  } finally {
    await daemon.stop();
  }
};
