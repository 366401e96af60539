/** Whether the process `pid` is still running, probed with signal 0 (which sends nothing). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
