import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { Recoverable, start, type REPLServer } from 'node:repl';
import {
  AbortedError,
  ContextLostError,
  ContextRestartedError,
  ExecutionTimeoutError,
  type CodeContext,
  type Sandbox,
} from '@sandbox/sdk';
import type { CliIo } from './context';
import { exitCodeOf, OUTCOMES } from './exit-codes';
import { errorLine } from './output';
import {
  entryIncomplete,
  errorText,
  historyPath,
  isIncomplete,
  resultLines,
  stylesFor,
  type Styles,
} from './repl-render';

export interface ReplOptions {
  /** Each cell's timeout (default the session's). */
  timeoutMs?: number;
}

/** Lines the REPL keeps in its history. */
const HISTORY_SIZE = 1000;

/** The prompt of each context's language: a shell context's is `sh`. */
const PROMPTS: Record<CodeContext['language'], string> = {
  typescript: 'ts',
  javascript: 'js',
  bash: 'sh',
};

/**
 * An interactive REPL on a code context, on Node's own `repl` (line editing, history, `.help`,
 * `.break`, `.editor`) with an evaluator that runs each entry as a cell of the context: its
 * output streams as it comes, its values and error print as they arrive. An entry the cell's
 * compiler finds cut short continues on the next line. Ctrl-C stops a running cell (the
 * context's process is killed: it restarts, without its variables), else clears the line;
 * Ctrl-D or `.exit` leaves. Resolves with the exit code: 0, or that of a failure that ended it
 * (the session or the context gone).
 */
export class CellRepl {
  private running: AbortController | undefined;
  /** The cells entered, run one after the other. */
  private queue: Promise<unknown> = Promise.resolve();
  private exitCode: number = OUTCOMES.ok.code;
  /** A failure ends the REPL: entries left are not run. */
  private ending = false;
  private readonly styles: Styles;
  private server: REPLServer | undefined;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly context: CodeContext,
    private readonly io: CliIo,
    private readonly options: ReplOptions,
  ) {
    this.styles = stylesFor(io.stdout.isTTY === true, io.env);
  }

  async run(): Promise<number> {
    const stdin = this.io.stdin as NodeJS.ReadableStream & { isTTY?: boolean };
    const terminal = this.io.stdout.isTTY === true && stdin.isTTY === true;
    // Piped input goes in a line at a time, each once the one before is done (below).
    const input = terminal ? stdin : new PassThrough();
    const server = start({
      prompt: terminal ? `${PROMPTS[this.context.language]}> ` : '',
      input,
      output: this.io.stdout,
      terminal,
      // One cell at a time, in the order entered (a line typed ahead waits its turn).
      eval: (code, _context, _file, done) => {
        // A shell context's entry is one command line (bash says what it cannot parse).
        const { language } = this.context;
        if (language !== 'bash' && entryIncomplete(code, language)) {
          done(new Recoverable(new SyntaxError('more')), undefined);
          return;
        }
        this.queue = this.queue
          .then(() => (this.ending ? false : this.evaluate(code)))
          .then(
            (incomplete) =>
              done(incomplete ? new Recoverable(new SyntaxError('more')) : null, undefined),
            () => done(null, undefined),
          );
      },
      ignoreUndefined: true,
      // Passed on to readline (Node's REPL does), though its type leaves it out.
      ...({ historySize: HISTORY_SIZE } as object),
    });
    this.server = server;
    const ended = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    const prompted = this.watchPrompts(server, terminal, ended);
    this.defineCommands(server);
    this.takeInterrupts(server);
    await this.setupHistory(server);
    if (input instanceof PassThrough) void this.feed(input, prompted, ended);
    const stopListening = this.io.onInterrupt(() => server.emit('SIGINT'));
    try {
      await ended;
      await this.queue; // a cell still under way at Ctrl-D ends first
    } finally {
      stopListening();
    }
    return this.exitCode;
  }

  /**
   * Piped input, a line at a time: the next once the REPL prompts again (its entry done, or
   * waiting for more), so that an entry's continuation joins it and cells run in order.
   */
  private async feed(
    into: PassThrough,
    prompted: () => Promise<void>,
    ended: Promise<void>,
  ): Promise<void> {
    let over = false;
    void ended.then(() => (over = true));
    const lines = createInterface({ input: this.io.stdin, crlfDelay: Infinity });
    for await (const line of lines) {
      if (over) break;
      const next = prompted();
      into.write(`${line}\n`);
      await Promise.race([next, ended]);
    }
    lines.close();
    into.end();
  }

  /**
   * Tells each time the REPL prompts (the promise the function returns resolves at the next
   * prompt); without a terminal, prompts print nothing (not even "... " for more).
   */
  private watchPrompts(
    server: REPLServer,
    terminal: boolean,
    ended: Promise<void>,
  ): () => Promise<void> {
    let waiters: (() => void)[] = [];
    void ended.then(() => waiters.forEach((wake) => wake()));
    const display = server.displayPrompt.bind(server);
    server.displayPrompt = (preserveCursor?: boolean) => {
      if (this.ending) return; // closed after a failure: no prompt, no more input
      if (terminal) display(preserveCursor);
      else server.prompt(preserveCursor);
      const woken = waiters;
      waiters = [];
      woken.forEach((wake) => wake());
    };
    return () => new Promise<void>((resolve) => waiters.push(resolve));
  }

  /** Ctrl-C stops the cell that runs, else does what Node's REPL does (clear, then leave). */
  private takeInterrupts(server: REPLServer): void {
    const own = server.listeners('SIGINT') as (() => void)[];
    server.removeAllListeners('SIGINT');
    server.on('SIGINT', () => {
      if (this.running !== undefined) this.running.abort(new Error('Interrupted (Ctrl-C)'));
      else for (const listener of own) listener.call(server);
    });
  }

  private defineCommands(server: REPLServer): void {
    server.defineCommand('restart', {
      help: 'Restart the context: a fresh process, its variables gone',
      action: () => {
        this.sandbox.contexts
          .restart(this.context.contextId)
          .then(
            () => this.say(this.styles.dim('The context was restarted.')),
            (err: unknown) => this.failed(err),
          )
          .finally(() => server.displayPrompt());
      },
    });
  }

  /** Keeps the history in its file (made private to the user); a failure only says so. */
  private async setupHistory(server: REPLServer): Promise<void> {
    const path = historyPath(this.io.env);
    if (path === undefined || !server.terminal) return;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    } catch {
      // setupHistory says what is wrong
    }
    await new Promise<void>((resolve) => {
      server.setupHistory(path, (err) => {
        if (err !== null) {
          this.io.stderr.write(`sandbox: history not kept (${err.message})\n`);
        }
        resolve();
      });
    });
  }

  /** Runs one entry as a cell; true when it stopped short and needs more lines. */
  private async evaluate(input: string): Promise<boolean> {
    if (input.trim() === '') return false;
    const controller = new AbortController();
    this.running = controller;
    try {
      const options = {
        context: this.context,
        timeoutMs: this.options.timeoutMs,
        signal: controller.signal,
        onStdout: (data: string) => this.io.stdout.write(data),
        onStderr: (data: string) => this.io.stderr.write(data),
      };
      const result =
        this.context.language === 'bash'
          ? await this.sandbox.runCommand(input, options)
          : await this.sandbox.runCode(input, {
              ...options,
              onResult: (value) => this.say(resultLines(value).join('\n')),
            });
      if (isIncomplete(result)) return true;
      if (result.error !== undefined) this.say(this.styles.red(errorText(result.error)), 'stderr');
      return false;
    } catch (err) {
      this.cellFailed(err, controller.signal.aborted);
      return false;
    } finally {
      this.running = undefined;
    }
  }

  private cellFailed(err: unknown, interrupted: boolean): void {
    const dim = (text: string): string => this.styles.dim(text);
    if (interrupted || err instanceof AbortedError) {
      this.say(
        dim('Interrupted: the cell was stopped; the context restarts without its variables.'),
      );
    } else if (err instanceof ExecutionTimeoutError && this.context.language === 'bash') {
      this.say(dim('The command timed out: its shell was ended; the next runs in a fresh one.'));
    } else if (err instanceof ExecutionTimeoutError) {
      this.say(dim("The cell timed out and was stopped; the context's variables remain."));
    } else if (err instanceof ContextRestartedError) {
      this.say(dim(err.message));
    } else if (err instanceof ContextLostError) {
      this.say(dim(`${err.message}: .restart makes it again, empty`));
    } else this.failed(err);
  }

  /** A failure the REPL cannot go on after (the session or context gone, auth) ends it. */
  private failed(err: unknown): void {
    this.say(errorLine(err), 'stderr');
    const code = exitCodeOf(err);
    if (code === OUTCOMES.notFound.code || code === OUTCOMES.auth.code) {
      this.exitCode = code;
      this.ending = true;
      this.server?.close();
    }
  }

  private say(text: string, to: 'stdout' | 'stderr' = 'stdout'): void {
    this.io[to].write(`${text}\n`);
  }
}
