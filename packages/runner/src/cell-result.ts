import { inspect } from 'node:util';
import type { CellError, CellResult } from '@sandbox/contract/run';

export type { CellError, CellOutcome, CellResult } from '@sandbox/contract/run';

/*
 * What a cell answers with: its values as MIME bundles, its error as name, message and stack.
 * Shared by the context's process (which makes them) and the runner (which relays them).
 */

/** Longest JSON kept in a result (larger values come back as text only). */
export const MAX_JSON_CHARS = 1_000_000;

/** The value's JSON, where it serializes to an object, array, string, number or boolean. */
function jsonOf(value: unknown): string | undefined {
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
    return undefined;
  }
  try {
    const json = JSON.stringify(value);
    return json === undefined || json.length > MAX_JSON_CHARS ? undefined : json;
  } catch {
    return undefined; // cycles, BigInt inside, a throwing toJSON
  }
}

/** A value as a result: `util.inspect` text, plus JSON where it serializes. */
export function resultOf(value: unknown, isMain: boolean): CellResult {
  const data: Record<string, string> = {
    'text/plain': inspect(value, { depth: 4, maxArrayLength: 200, maxStringLength: 100_000 }),
  };
  const json = jsonOf(value);
  if (json !== undefined) data['application/json'] = json;
  return { data, isMain };
}

const MIME_TYPE = /^[a-z]+\/[\w.+-]+$/;

/** Whether `value` is a MIME bundle: a plain object of MIME types to text or bytes. */
function isBundle(value: unknown): value is Record<string, string | Uint8Array> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length > 0 &&
    entries.every(
      ([key, part]) =>
        MIME_TYPE.test(key) && (typeof part === 'string' || part instanceof Uint8Array),
    )
  );
}

/**
 * What `display(value)` adds to a cell's results: a MIME bundle as it is (bytes, for
 * `image/png`, base64-encoded; `text/plain` added when missing), any other value as the last
 * expression's would be.
 */
export function displayed(value: unknown): CellResult {
  if (!isBundle(value)) return resultOf(value, false);
  const data: Record<string, string> = {};
  for (const [type, part] of Object.entries(value)) {
    data[type] = typeof part === 'string' ? part : Buffer.from(part).toString('base64');
  }
  data['text/plain'] ??= `[${Object.keys(value).join(', ')}]`;
  return { data, isMain: false };
}

/** Node's promise-job frame: the bottom of every cell's stack, the context's loop, not the cell's. */
const TICK_FRAME =
  /^\s+at process\.processTicksAndRejections \(node:internal\/process\/task_queues:/;

/** A stack without the frames of the context's own machinery (`hostFile`, node:vm, its ticks). */
export function cellStack(stack: string, hostFile: string): string {
  return stack
    .split('\n')
    .filter(
      (line) => !line.includes(hostFile) && !line.includes('(node:vm:') && !TICK_FRAME.test(line),
    )
    .join('\n');
}

/**
 * A thrown value as an error: an Error's own name, message and stack (less the frames of
 * `hostFile`); anything else inspected.
 */
export function errorOf(thrown: unknown, hostFile = ''): CellError {
  if (thrown instanceof Error) {
    const stack = thrown.stack ?? `${thrown.name}: ${thrown.message}`;
    return {
      name: thrown.name,
      message: thrown.message,
      stack: hostFile === '' ? stack : cellStack(stack, hostFile),
    };
  }
  const text = inspect(thrown);
  return { name: 'Error', message: `Uncaught ${text}`, stack: `Uncaught ${text}` };
}
