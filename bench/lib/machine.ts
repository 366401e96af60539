import { arch, cpus, loadavg, release, totalmem, type } from 'node:os';

/** What the numbers were measured on. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  totalMemoryBytes: number;
  os: string;
  node: string;
  /** One-minute load average when the run began: a busy shared machine shows here. */
  loadAverage: number;
}

export const machineInfo = (): MachineInfo => {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    totalMemoryBytes: totalmem(),
    os: `${type()} ${release()} ${arch()}`,
    node: process.version,
    loadAverage: loadavg()[0] ?? 0,
  };
};
