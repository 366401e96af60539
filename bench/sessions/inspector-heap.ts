import { createServer } from 'node:net';
import WebSocket from 'ws';

/** A port free now, for a child's `--inspect=127.0.0.1:<port>`. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

/** `node` flag that opens the inspector on `port`, for `inspectHeap`. */
export const inspectFlag = (port: number) => `--inspect=127.0.0.1:${port}`;

/**
 * Attaches to a process started with `inspectFlag(port)`: a full GC on demand and the V8 heap in
 * use after it. An idle daemon may not collect for minutes, so RSS alone would count garbage.
 */
export const inspectHeap = async (port: number) => {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const pending = new Map<number, (result: unknown) => void>();
  socket.on('message', (data) => {
    const { id, result } = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (id !== undefined) pending.get(id)?.(result);
    if (id !== undefined) pending.delete(id);
  });
  let next = 0;
  const send = <T>(method: string) =>
    new Promise<T>((resolve) => {
      const id = ++next;
      pending.set(id, (result) => resolve(result as T));
      socket.send(JSON.stringify({ id, method }));
    });
  return {
    /** Collects all garbage, then returns the bytes of V8 heap still in use. */
    async heapAfterGc(): Promise<number> {
      await send('HeapProfiler.collectGarbage');
      return (await send<{ usedSize: number }>('Runtime.getHeapUsage')).usedSize;
    },
    close: () => socket.close(),
  };
};
