import { arch, availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';

/** What the numbers were measured on. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  totalMemoryBytes: number;
  os: string;
  node: string;
  /** One-minute load average when the section began: a busy shared machine shows here. */
  loadAverage: number;
}

/** The machine as it is now, its load average included. */
export const machineInfo = (): MachineInfo => {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    totalMemoryBytes: totalmem(),
    os: `${type()} ${release()} ${arch()}`,
    node: process.version,
    loadAverage: loadavg()[0] ?? 0,
  };
};
