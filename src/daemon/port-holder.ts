import { dirname } from 'node:path';
import { daemonServing } from '../hooks/find-daemon.js';
import { pulse, shellWord } from '../package/pulse-command.js';

/**
 * Why the port is taken, for the message of a start that cannot listen: a pulse that serves this
 * very project there (one older than the project lock) is named, with where to use it; anything
 * else keeps the port and gets another suggested. The lock already refuses a second daemon for
 * one project, so `--port` never starts one. The holder is never asked over the network: it may
 * be any program.
 */
export const portInUseMessage = (host: string, port: number, pulseDir: string): string => {
  const discovery = daemonServing(dirname(pulseDir));
  if (discovery !== null && discovery.port === port && discovery.pid !== process.pid) {
    return `pulse is already running for this project (pid ${discovery.pid}) at ${discovery.url}: use it (${pulse(`status -p ${shellWord(dirname(pulseDir))}`)}), or stop it first (${pulse(`stop -p ${shellWord(dirname(pulseDir))}`)}).`;
  }
  return `Port ${port} on ${host} is already in use by another program, or by pulse for another project. Pick another with --port ${port + 1}, or --port 0 for any free port.`;
};
