/**
 * A code context's process (ADR 42): a long-lived Node, started by the runner's spawner as
 * the sandbox user like any run, that runs one cell at a time in its own global scope, so that
 * what a cell declares is there for the next. It reads the runner's requests on stdin (one
 * JSON line each: first the token of its answers, then cells already stripped of their
 * types) and answers on stdout, beside the cells' own output (frames.ts); after each cell it
 * marks the end of that cell's stderr too.
 */
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import { createInterface } from 'node:readline';
import { constants, Script } from 'node:vm';
import { displayed, errorOf, resultOf, type CellOutcome, type CellResult } from './cell-result';
import { IMPORTER, rewriteImports, type Parse } from './cell-source';
import { frameMark } from './frames';
import { ReplEvaluator } from './repl-eval';

/** A cell, as the runner sends it. */
export interface CellRequest {
  code: string;
  timeoutMs: number;
  env: Record<string, string>;
}

/**
 * The runner's first line: the token of the answers, and the context's working directory and
 * environment (a spare process, started ahead, takes them only now).
 */
export interface ContextHello {
  token: string;
  cwd?: string;
  env?: Record<string, string>;
}

/** The answer to a cell (besides its output). */
export interface CellAnswer extends CellOutcome {
  ev: 'done';
  timedOut: boolean;
  /** A shell context's command's exit status (shell-context.ts); a Node's cells have none. */
  exitCode?: number;
}

/** Node's own copy of acorn (the context is started with --expose-internals), loaded once. */
const parser = (): Parse =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('internal/deps/acorn/acorn/dist/acorn') as { parse: Parse }).parse;

let evaluator: ReplEvaluator | undefined;
let token = '';
let cells = 0;
/** An error thrown or a promise rejected outside the cell's own flow while it runs. */
let stray = undefined as { error: unknown } | undefined;
let running = false;
/** What the running cell passed to `display`. */
let shown: CellResult[] = [];
/** Results a cell may display at the most (more are dropped). */
const MAX_DISPLAYED = 100;

/**
 * The streams' own writes, taken before any cell runs. A full pipe makes them queue: an answer
 * or an end mark written past that queue (a direct write to the descriptor) would overtake the
 * cell's last output, and the runner would end the cell without it.
 */
const toStdout = process.stdout.write.bind(process.stdout);
const toStderr = process.stderr.write.bind(process.stderr);

function answer(message: object): void {
  toStdout(`${frameMark(token)}${JSON.stringify(message)}\n`);
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

/** The cell's value: its script's completion value, a promise of it awaited. */
async function valueOf(cell: CellRequest, deadline: number): Promise<unknown> {
  evaluator ??= new ReplEvaluator();
  const source = rewriteImports(cell.code, parser);
  const filename = posix.join(process.cwd(), `<cell-${cells}>`);
  const evaluated = await within(
    evaluator.evaluate(source, filename, cell.timeoutMs),
    deadline - Date.now(),
  );
  if ('timedOut' in evaluated) throw new CellTimeout();
  if ('thrown' in evaluated) throw evaluated.thrown;
  const { value } = evaluated;
  return value instanceof Promise ? within(value, deadline - Date.now()) : value;
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
    const value = await valueOf(cell, deadline);
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
      error: errorOf(err, `${__dirname}/`),
      timedOut: err instanceof CellTimeout,
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

/**
 * Takes the context's working directory and environment, and defines what a cell finds in its
 * global scope: `display`, a `require` and an importer (cell-source.ts) that resolve from there.
 */
function settle(hello: ContextHello): void {
  if (hello.cwd !== undefined) process.chdir(hello.cwd);
  if (hello.env !== undefined) Object.assign(process.env, hello.env);
  const here = posix.join(process.cwd(), '<context>');
  const importer = new Script('(specifier, options) => import(specifier, options)', {
    filename: here,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  }).runInThisContext() as unknown;
  const global = globalThis as Record<string, unknown>;
  Object.defineProperty(global, IMPORTER, { value: importer, configurable: true, writable: true });
  global.display = display;
  global.require = createRequire(here);
}

function main(): void {
  catchStrays();
  let queue = Promise.resolve();
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (token === '') {
      const hello = JSON.parse(line) as ContextHello;
      settle(hello);
      token = hello.token;
      answer({ ev: 'ready' });
      return;
    }
    const cell = JSON.parse(line) as CellRequest;
    queue = queue.then(async () => {
      const done = await runCell(cell);
      answer(done);
      toStderr(`${frameMark(token)}end\n`);
    });
  });
  // The runner went away: so does the context.
  lines.on('close', () => process.exit(0));
}

main();
