import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/**
 * The helper: reads a command (its word count, then one word per line), runs it with its
 * output captured, and answers `<exit code> <output bytes>\n<output>`; then the next one.
 */
const HELPER = `
while IFS= read -r n; do
  set --
  while [ "$#" -lt "$n" ]; do IFS= read -r word || exit 0; set -- "$@" "$word"; done
  out=$("$@" 2>&1 </dev/null); code=$?
  printf '%s %s\\n%s' "$code" "\${#out}" "$out"
done`;

/**
 * How long a helper with nothing to do stays: a burst of creates, or the pool's next refill,
 * reuses it. An idle shell holds about a megabyte and no CPU.
 */
const IDLE_MS = 5 * 60_000;

/** A command that exited other than 0: its code and output, as `execFile`'s error has them. */
export class HostCommandError extends Error {
  constructor(
    readonly argv: readonly string[],
    readonly code: number,
    readonly output: string,
  ) {
    super(`${argv.join(' ')} exited ${code}: ${output.trim()}`);
    this.name = 'HostCommandError';
  }
}

type HelperProcess = ChildProcessByStdio<Writable, Readable, null>;

/** One helper shell, running one command at a time. */
class Helper {
  private readonly child: HelperProcess;
  private buffer = Buffer.alloc(0);
  private pending:
    | { resolve: (answer: { code: number; output: string }) => void; reject: (err: Error) => void }
    | undefined;
  private ended: Error | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly onGone: (helper: Helper) => void) {
    this.child = spawn('/bin/sh', ['-c', HELPER], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.stdin.on('error', () => undefined); // the exit below tells
    this.child.once('error', (err) => this.end(err));
    this.child.once('exit', (code, signal) =>
      this.end(new Error(`the host command helper ended (${signal ?? code})`)),
    );
    this.rest();
  }

  get alive(): boolean {
    return this.ended === undefined;
  }

  run(argv: readonly string[]): Promise<{ code: number; output: string }> {
    if (this.ended !== undefined) return Promise.reject(this.ended);
    clearTimeout(this.idleTimer);
    this.child.ref();
    (this.child.stdout as unknown as { ref?: () => void }).ref?.();
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.stdin.write(`${argv.length}\n${argv.map((word) => `${word}\n`).join('')}`);
    });
  }

  /** Idle: it keeps no process alive, and goes after a while. */
  rest(): void {
    this.child.unref();
    (this.child.stdout as unknown as { unref?: () => void }).unref?.();
    (this.child.stdin as unknown as { unref?: () => void }).unref?.();
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(), IDLE_MS);
    this.idleTimer.unref();
  }

  close(): void {
    clearTimeout(this.idleTimer);
    this.child.stdin.end();
    this.end(new Error('the host command helper was closed'));
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const newline = this.buffer.indexOf(10);
    if (newline < 0) return;
    const [code = '', bytes = ''] = this.buffer.subarray(0, newline).toString().split(' ');
    const end = newline + 1 + Number(bytes);
    if (this.buffer.length < end) return;
    const output = this.buffer.subarray(newline + 1, end).toString();
    this.buffer = this.buffer.subarray(end);
    const pending = this.pending;
    this.pending = undefined;
    pending?.resolve({ code: Number(code), output });
  }

  private end(err: Error): void {
    if (this.ended !== undefined) return;
    this.ended = err;
    clearTimeout(this.idleTimer);
    this.pending?.reject(err);
    this.pending = undefined;
    this.onGone(this);
  }
}

/**
 * Runs the agent's host commands (mount, umount, mkfs, …) through small helper shells that
 * stay up, rather than as children of the agent. Each start of a child forks the agent's whole
 * Node (~200 MB) and blocks its event loop until the child runs: 10–20 ms of CPU each on
 * this kind of VM (its page faults are costly), which a create waiting on the same loop
 * shares. A helper shell forks in about a millisecond. One command per helper at a time;
 * helpers are made as commands overlap, up to `maxHelpers`: past that a command waits for the
 * first helper free, never for a new one (a burst of creates made a helper for each of its
 * disk moves, and forked the agent dozens of times a second). Helpers stay while they have
 * work, and `IDLE_MS` after.
 */
export class HostCommands {
  private readonly idle: Helper[] = [];
  private helpers = 0;
  private readonly waiting: ((helper: Helper) => void)[] = [];
  /** Helper shells started so far (each a fork of the agent). */
  started = 0;

  constructor(private readonly maxHelpers = 8) {}

  /** The command's output; a HostCommandError when it exits other than 0. */
  async run(argv: readonly string[]): Promise<string> {
    if (argv.length === 0) throw new Error('no command');
    for (const word of argv) {
      if (word.includes('\n')) throw new Error(`a host command's words hold no newline: ${word}`);
    }
    const helper = await this.acquire();
    let answer: { code: number; output: string };
    try {
      answer = await helper.run(argv);
    } finally {
      this.release(helper);
    }
    if (answer.code !== 0) throw new HostCommandError(argv, answer.code, answer.output);
    return answer.output;
  }

  /** Ends every idle helper. */
  close(): void {
    for (const helper of this.idle.splice(0)) helper.close();
  }

  private acquire(): Promise<Helper> {
    const idle = this.idle.pop();
    if (idle !== undefined) return Promise.resolve(idle);
    if (this.helpers < this.maxHelpers) return Promise.resolve(this.start());
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The helper goes to the next waiting command, or rests; a dead one is replaced for it. */
  private release(helper: Helper): void {
    const next = this.waiting.shift();
    if (next !== undefined) {
      next(helper.alive ? helper : this.start());
      return;
    }
    if (!helper.alive) return;
    helper.rest();
    this.idle.push(helper);
  }

  private start(): Helper {
    this.helpers += 1;
    this.started += 1;
    return new Helper((gone) => this.forget(gone));
  }

  private forget(helper: Helper): void {
    this.helpers -= 1;
    const index = this.idle.indexOf(helper);
    if (index >= 0) this.idle.splice(index, 1);
  }
}

/** The agent's one set of helpers. */
export const hostCommands = new HostCommands();
