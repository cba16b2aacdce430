import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { RunnerContext } from './op-handlers';
import { spawner, zygotes } from './exec';
import { infrastructurePids } from './process-ops';
import type { RunnerRequest } from './protocol';
import { RunnerServer } from './runner-server';
import { warmUpTranspiler } from './transpile';

/**
 * Serves the runner protocol on `input`/`output` until `input` ends or closes. Requests run
 * concurrently; output flow control follows `output`'s backpressure. `options.startRun` replaces
 * how runs start (tests run without processes).
 */
export async function serve(
  input: Readable,
  output: Writable,
  options: { startRun?: RunnerContext['startRun']; front?: number } = {},
): Promise<void> {
  const infrastructure = await infrastructurePids();
  const server = new RunnerServer(output, { ...options, infrastructure });
  // The first run finds its starter, esbuild and a Node started already.
  if (options.startRun === undefined) {
    spawner.prepare();
    warmUpTranspiler();
    zygotes.prepare();
  }
  const lines = createInterface({ input, crlfDelay: Infinity });
  // A socket destroyed (its agent's exec stream ended) closes without ending.
  input.once('close', () => lines.close());
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const request = parseRequest(line);
    if (request !== undefined) server.handle(request);
  }
  // The agent went away: foreground runs stop; background processes live on.
  server.cancelRuns();
  zygotes.close();
  spawner.close();
  // The last answers, before the process exits.
  server.channel.flush();
}

/** A request line, or undefined for one that is not ours to answer (no id to answer to). */
function parseRequest(line: string): RunnerRequest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const id = (value as { id?: unknown } | null)?.id;
  return typeof value === 'object' && !Array.isArray(value) && typeof id === 'number'
    ? (value as RunnerRequest)
    : undefined;
}
