import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** Remembers the pid at spawn: the SDK forgets it as soon as a close starts, before the child is gone. */
export class StdioTransport extends StdioClientTransport {
  spawnedPid: number | null = null;

  override async start(): Promise<void> {
    await super.start();
    this.spawnedPid = this.pid;
  }
}
