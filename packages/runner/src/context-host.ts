/**
 * A code context's process (ADR 42): a long-lived Node, started by the runner's spawner as
 * the sandbox user like any run, that runs one cell at a time in its own global scope, so that
 * what a cell declares is there for the next. It reads the runner's requests on stdin (one
 * JSON line each: first the token of its answers, then cells already stripped of their
 * types) and answers on stdout, beside the cells' own output (frames.ts); after each cell it
 * marks the end of that cell's stderr too.
 */
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import { createInterface } from 'node:readline';
import { constants, Script } from 'node:vm';
import { displayed, errorOf, resultOf, type CellOutcome, type CellResult } from './cell-result';
import { dynamicImports, mayAwait } from './cell-source';
import { frameMark } from './frames';

/** A cell, as the runner sends it. */
export interface CellRequest {
  code: string;
  timeoutMs: number;
  env: Record<string, string>;
}

/** The answer to a cell (besides its output). */
export interface CellAnswer extends CellOutcome {
  ev: 'done';
  timedOut: boolean;
}

type TopLevelAwait = (source: string) => string | null;

/** Node's own REPL rewrite for top-level await (its declarations kept global), if reachable. */
function loadTopLevelAwait(): TopLevelAwait | undefined {
  try {
    // Node's internal module, reachable with --expose-internals (the context is started so).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('internal/repl/await') as { processTopLevelAwait: TopLevelAwait })
      .processTopLevelAwait;
  } catch {
    return undefined;
  }
}

const topLevelAwait = loadTopLevelAwait();
let token = '';
let cells = 0;
/** An error thrown or a promise rejected outside the cell's own flow while it runs. */
let stray = undefined as { error: unknown } | undefined;
let running = false;
/** What the running cell passed to `display`. */
let shown: CellResult[] = [];
/** Results a cell may display at the most (more are dropped). */
const MAX_DISPLAYED = 100;

function answer(message: object): void {
  writeSync(1, `${frameMark(token)}${JSON.stringify(message)}\n`);
}

/** The cell as a script, and whether its value is a promise of `{ value }` (top-level await). */
function scriptOf(code: string): { source: string; wrapped: boolean } {
  const source = dynamicImports(code);
  if (!mayAwait(source)) return { source, wrapped: false };
  const rewritten = topLevelAwait?.(source) ?? null;
  if (rewritten !== null) return { source: rewritten, wrapped: true };
  return { source, wrapped: false };
}

/** The promise's value, or a timeout once `ms` passed. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new CellTimeout()), Math.max(1, ms));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

class CellTimeout extends Error {
  constructor() {
    super('The cell ran out of time');
    this.name = 'TimeoutError';
  }
}

function timedOutError(err: unknown): boolean {
  return (
    err instanceof CellTimeout ||
    (err as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
  );
}

/** Runs one cell: its value (or error) when it settled, within its timeout. */
async function runCell(cell: CellRequest): Promise<CellAnswer> {
  Object.assign(process.env, cell.env);
  const deadline = Date.now() + cell.timeoutMs;
  cells += 1;
  stray = undefined;
  shown = [];
  running = true;
  try {
    const { source, wrapped } = scriptOf(cell.code);
    const script = new Script(source, {
      filename: posix.join(process.cwd(), `<cell-${cells}>`),
      importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    let value: unknown = script.runInThisContext({ timeout: cell.timeoutMs, displayErrors: false });
    if (wrapped) {
      const settled = await within(
        value as Promise<{ value: unknown } | undefined>,
        deadline - Date.now(),
      );
      value = settled?.value;
    } else if (value instanceof Promise) value = await within(value, deadline - Date.now());
    // Rejections the cell left unhandled are reported after a turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    const strayed = stray as { error: unknown } | undefined;
    if (strayed !== undefined) throw strayed.error;
    const results = value === undefined ? shown : [...shown, resultOf(value, true)];
    return { ev: 'done', results, timedOut: false };
  } catch (err) {
    return {
      ev: 'done',
      results: shown,
      error: errorOf(err, __filename),
      timedOut: timedOutError(err),
    };
  } finally {
    running = false;
  }
}

/** What fails outside a cell's flow is the running cell's error, else written to stderr. */
function catchStrays(): void {
  const strayError = (error: unknown) => {
    if (running && stray === undefined) stray = { error };
    else process.stderr.write(`Uncaught ${errorOf(error).stack}\n`);
  };
  process.on('uncaughtException', strayError);
  process.on('unhandledRejection', strayError);
}

/** `display(value | mimeBundle)`: a result of the running cell besides its last value. */
function display(value: unknown): void {
  if (running && shown.length < MAX_DISPLAYED) shown.push(displayed(value));
}

function main(): void {
  catchStrays();
  (globalThis as Record<string, unknown>).display = display;
  (globalThis as Record<string, unknown>).require = createRequire(
    posix.join(process.cwd(), '<context>'),
  );
  let queue = Promise.resolve();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (token === '') {
      token = (JSON.parse(line) as { token: string }).token;
      answer({ ev: 'ready' });
      return;
    }
    const cell = JSON.parse(line) as CellRequest;
    queue = queue.then(async () => {
      const done = await runCell(cell);
      answer(done);
      writeSync(2, `${frameMark(token)}end\n`);
    });
  });
  // The runner went away: so does the context.
  lines.on('close', () => process.exit(0));
}

main();
