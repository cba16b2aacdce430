import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface EmbeddedPostgres {
  /** A `postgres://` URL that node-postgres can use. */
  readonly connectionString: string;
  stop(): Promise<void>;
}

/**
 * The worker's code. PGlite runs Postgres as WebAssembly on the thread that calls it: on the
 * gateway's event loop, each query's execution, and the collection of its heap, would hold up
 * every request. In a worker it has a thread, an event loop and a heap of its own (on this
 * 2-core machine, 60 sessions' first runs at once: docs/performance.md, 2026-11-30 morning).
 * Source text rather than a file of its own, so that it runs the same from `dist/` and from the
 * tests' TypeScript sources; the modules come as paths resolved by the gateway.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const { PGLiteSocketServer } = require(workerData.socket);
(async () => {
  const db = await PGlite.create(workerData.dataDir === 'memory' ? undefined : workerData.dataDir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  parentPort.once('message', async () => {
    await server.stop();
    await db.close();
    parentPort.close();
  });
  parentPort.postMessage({ address: server.getServerConn() });
})().catch((err) => {
  parentPort.postMessage({ error: String((err && err.stack) || err) });
  parentPort.close();
});
`;

/** How long a stop waits for the worker to close its database before it is terminated. */
const STOP_TIMEOUT_MS = 10_000;

/** What the worker says once: where it serves, or why it could not start. */
type Started = { address: string } | { error: string };

/**
 * Starts PGlite (Postgres compiled to WebAssembly) in a worker thread behind a loopback socket,
 * for running the gateway without a Postgres server. It serves one connection at a time.
 * `onFailure` hears of a worker that fails after it started (its connection then fails too).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  onFailure: (err: Error) => void = () => undefined,
): Promise<EmbeddedPostgres> {
  if (dataDir !== 'memory') mkdirSync(dataDir, { recursive: true });
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      dataDir,
      pglite: require.resolve('@electric-sql/pglite'),
      socket: require.resolve('@electric-sql/pglite-socket'),
    },
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const started = await new Promise<Started>((resolve) => {
    worker.once('message', resolve);
    worker.once('error', (err) => resolve({ error: String(err.stack ?? err) }));
    void exited.then(() => resolve({ error: 'the embedded Postgres worker exited' }));
  });
  if ('error' in started) {
    await worker.terminate();
    throw new Error(`embedded Postgres did not start: ${started.error}`);
  }
  worker.on('error', onFailure);
  return {
    connectionString: `postgres://postgres@${started.address}/postgres?sslmode=disable`,
    async stop() {
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
