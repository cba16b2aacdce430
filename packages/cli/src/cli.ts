import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable, type Writable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import {
  Sandbox,
  SandboxError,
  type ClientOptions,
  type ExecutionResult,
  type RunInput,
} from '@sandbox/sdk';

export const USAGE = `Usage: sandbox [--json] [--api-url URL] [--api-key KEY] <command>

Commands:
  create [--ttl S] [--memory MB] [--cpu N] [--timeout S] [--metadata JSON] [--private-preview]
  ls                             the account's sessions
  ls SID[:DIR]                   the files of a session (recursive)
  info SID
  run [--session SID] [--keep] [--timeout S] [--env K=V]... FILE|-
                                 runs a JavaScript/TypeScript file (- : standard input) in
                                 SID, or in a new session removed afterwards (kept with
                                 --keep); output streams live; exits with the run's code
  exec [--timeout S] [--cwd DIR] [--env K=V]... SID -- COMMAND...
                                 runs a shell command; output streams live; its exit code
  cp SRC DST                     copies a file to or from a session: SID:PATH on one side,
                                 a local path or - (standard input/output) on the other
  terminal SID [--shell PATH]    an interactive shell in the session, in this terminal
                                 (raw mode; exits with the shell's exit code)
  open SID [--port N]            prints the preview URL (and its token header, if private)
  ps SID                         the session's runs: pid, state, exit code, command
  logs [-f] SID PID              a run's kept output (PID: a pid or a proc_ id), its stdout
                                 and stderr here; -f follows it live until it ends (resumed
                                 if the connection drops)
  kill SID [PID]                 kills one process, or all of the session's
  rm SID...                      deletes sessions

--api-url defaults to $SANDBOX_API_URL (http://127.0.0.1:8080/v1), --api-key to $SANDBOX_API_KEY.
Results print for people on a terminal and as JSON otherwise (or with --json); run and exec
print the program's own output, or with --json its whole result. A run that timed out exits 124.`;

/** Where the CLI reads and writes; main.ts passes the process's own. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

class UsageError extends Error {}

const OPTIONS = {
  json: { type: 'boolean' },
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ttl: { type: 'string' },
  memory: { type: 'string' },
  cpu: { type: 'string' },
  timeout: { type: 'string' },
  metadata: { type: 'string' },
  'private-preview': { type: 'boolean' },
  session: { type: 'string' },
  keep: { type: 'boolean' },
  env: { type: 'string', multiple: true },
  cwd: { type: 'string' },
  port: { type: 'string' },
  shell: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

function numberOf(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`${flag} takes a number, not ${value}`);
  return n;
}

function envOf(pairs: string[] | undefined): Record<string, string> | undefined {
  if (pairs === undefined) return undefined;
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--env takes NAME=VALUE, not ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

const SESSION_PATH = /^(ses_[a-z0-9]{24}):(.*)$/;

/** `SID:PATH` as a session and a path, else undefined (a local path). */
function remoteOf(arg: string): { sessionId: string; path: string } | undefined {
  const match = SESSION_PATH.exec(arg);
  return match === null ? undefined : { sessionId: match[1] as string, path: match[2] as string };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

const mb = (bytes: number) => (bytes / 1_000_000).toFixed(1);

/** One command of the CLI. */
class Cli {
  private readonly client: ClientOptions;
  private readonly jsonOut: boolean;

  constructor(
    private readonly io: CliIo,
    private readonly values: Values,
  ) {
    this.client = {
      apiUrl: values['api-url'] ?? io.env.SANDBOX_API_URL,
      apiKey: values['api-key'] ?? io.env.SANDBOX_API_KEY,
    };
    this.jsonOut = values.json === true || io.stdout.isTTY !== true;
  }

  private print(value: unknown, human: () => string): void {
    this.io.stdout.write(this.jsonOut ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
  }

  private connect(sessionId: string | undefined): Promise<Sandbox> {
    if (sessionId === undefined) throw new UsageError('a session id is required');
    return Sandbox.connect(sessionId, this.client);
  }

  async create(): Promise<number> {
    const { values } = this;
    const memory = numberOf(values.memory, '--memory');
    const cpu = numberOf(values.cpu, '--cpu');
    const timeout = numberOf(values.timeout, '--timeout');
    let metadata: Record<string, unknown> | undefined;
    try {
      metadata =
        values.metadata === undefined
          ? undefined
          : (JSON.parse(values.metadata) as Record<string, unknown>);
    } catch {
      throw new UsageError('--metadata takes a JSON object');
    }
    const limited = memory !== undefined || cpu !== undefined || timeout !== undefined;
    const sandbox = await Sandbox.create({
      ...this.client,
      ttl: numberOf(values.ttl, '--ttl'),
      metadata,
      resourceLimits: limited ? { memory, cpu, timeout } : undefined,
      preview: values['private-preview'] === true ? { private: true } : undefined,
    });
    const session = {
      sessionId: sandbox.id,
      previewUrl: sandbox.previewUrl(),
      ...(sandbox.previewToken === undefined ? {} : { previewToken: sandbox.previewToken }),
    };
    this.print(session, () =>
      [
        sandbox.id,
        `preview: ${session.previewUrl}`,
        ...(sandbox.previewToken === undefined
          ? []
          : [`preview token (shown once): ${sandbox.previewToken}`]),
      ].join('\n'),
    );
    return 0;
  }

  async ls(target: string | undefined): Promise<number> {
    if (target === undefined) {
      const page = await Sandbox.list({ ...this.client, limit: 100 });
      this.print(page, () =>
        page.data.length === 0
          ? 'no sessions'
          : page.data
              .map((s) => `${s.sessionId}  ${s.state.padEnd(10)}  expires ${s.expiresAt}`)
              .join('\n'),
      );
      return 0;
    }
    const [sessionId, dir] = target.includes(':') ? target.split(/:(.*)/s) : [target, undefined];
    const sandbox = await this.connect(sessionId);
    const listed = await sandbox.files.list(dir === '' ? undefined : dir);
    this.print(listed, () =>
      listed.files
        .map((f) => `${String(f.size).padStart(10)}  ${f.modified}  ${f.path}`)
        .join('\n'),
    );
    return 0;
  }

  async info(sessionId: string | undefined): Promise<number> {
    const info = await (await this.connect(sessionId)).info();
    this.print(info, () =>
      Object.entries(info)
        .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
        .join('\n'),
    );
    return 0;
  }

  /** Streams a run's output to ours (or, with --json, prints its result); its exit code. */
  private async runIn(
    sandbox: Sandbox,
    input: RunInput,
    options: { timeout?: number; env?: Record<string, string>; workingDir?: string },
  ): Promise<number> {
    let result: ExecutionResult | undefined;
    for await (const event of sandbox.stream(input, options)) {
      if (this.values.json === true) {
        if (event.type === 'result') result = event.result;
      } else if (event.type === 'stdout') this.io.stdout.write(event.data);
      else if (event.type === 'stderr') this.io.stderr.write(event.data);
      else if (event.type === 'result') result = event.result;
    }
    if (result === undefined) throw new Error('the run ended without a result');
    if (this.values.json === true) this.io.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else if (result.timedOut) this.io.stderr.write('sandbox: the run timed out and was killed\n');
    return result.exitCode;
  }

  async run(file: string | undefined): Promise<number> {
    if (file === undefined) throw new UsageError('run needs a FILE (or - for standard input)');
    const code =
      file === '-' ? await readAll(this.io.stdin) : await readAll(createReadStream(file));
    const options = {
      timeout: numberOf(this.values.timeout, '--timeout'),
      env: envOf(this.values.env),
    };
    if (this.values.session !== undefined) {
      return this.runIn(await this.connect(this.values.session), { code }, options);
    }
    const sandbox = await Sandbox.create(this.client);
    try {
      return await this.runIn(sandbox, { code }, options);
    } finally {
      if (this.values.keep === true) this.io.stderr.write(`sandbox: kept ${sandbox.id}\n`);
      else await sandbox.delete();
    }
  }

  async exec(sessionId: string | undefined, command: string[]): Promise<number> {
    if (command.length === 0) throw new UsageError('exec needs SID -- COMMAND...');
    return this.runIn(
      await this.connect(sessionId),
      { command: command.join(' ') },
      {
        timeout: numberOf(this.values.timeout, '--timeout'),
        env: envOf(this.values.env),
        workingDir: this.values.cwd,
      },
    );
  }

  async cp(source: string | undefined, target: string | undefined): Promise<number> {
    if (source === undefined || target === undefined) throw new UsageError('cp needs SRC DST');
    const from = remoteOf(source);
    const to = remoteOf(target);
    if ((from === undefined) === (to === undefined)) {
      throw new UsageError('cp copies between a session (SID:PATH) and a local path or -');
    }
    if (to !== undefined) {
      const sandbox = await this.connect(to.sessionId);
      const size = source === '-' ? undefined : (await stat(source)).size;
      const input = source === '-' ? this.io.stdin : createReadStream(source);
      const showProgress = this.io.stderr.isTTY === true && (size ?? 0) > 1_000_000;
      const written = await sandbox.files.write(
        to.path,
        input as AsyncIterable<Uint8Array>,
        showProgress
          ? {
              onProgress: (sent) =>
                this.io.stderr.write(`\ruploading ${mb(sent)} / ${mb(size ?? 0)} MB`),
            }
          : {},
      );
      if (showProgress) this.io.stderr.write('\n');
      this.print(written, () => `${written.path}: ${written.size} bytes`);
      return 0;
    }
    const remote = from as { sessionId: string; path: string };
    const sandbox = await this.connect(remote.sessionId);
    const body = await sandbox.files.readStream(remote.path);
    const output: Writable =
      target === '-' ? (this.io.stdout as unknown as Writable) : createWriteStream(target);
    await pipeline(Readable.fromWeb(body as NodeReadableStream<Uint8Array>), output, {
      end: target !== '-',
    });
    return 0;
  }

  /**
   * A terminal of the session on this one: keys go there raw, its screen comes here, resizes
   * follow. Input that ends (a pipe) ends the shell's input with ^D. The shell's exit code.
   */
  async terminal(sessionId: string | undefined): Promise<number> {
    const sandbox = await this.connect(sessionId);
    const { stdin, stdout } = this.io;
    const screen = stdout as { columns?: number; rows?: number } & NodeJS.WritableStream;
    const terminal = await sandbox.terminals.create({
      shell: this.values.shell,
      cols: screen.columns ?? 80,
      rows: screen.rows ?? 24,
    });
    const keys = stdin as NodeJS.ReadableStream & {
      isTTY?: boolean;
      setRawMode?: (raw: boolean) => void;
    };
    const ws = new WebSocket(terminal.url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    let exitCode = 1;
    const onKeys = (chunk: Buffer): void => ws.send(chunk, { binary: true });
    const onEnd = (): void => ws.send(Buffer.from([4]), { binary: true }); // ^D
    const onResize = (): void =>
      ws.send(JSON.stringify({ type: 'resize', cols: screen.columns, rows: screen.rows }));
    if (keys.isTTY === true) keys.setRawMode?.(true);
    keys.on('data', onKeys);
    keys.on('end', onEnd);
    stdout.on('resize', onResize);
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        stdout.write(data);
        return;
      }
      const control = JSON.parse(data.toString('utf8')) as {
        type: string;
        exitCode?: number;
        error?: { message: string; code: string };
      };
      if (control.type === 'exit') exitCode = control.exitCode ?? 1;
      if (control.type === 'error') {
        this.io.stderr.write(`\r\nsandbox: ${control.error?.message} (${control.error?.code})\r\n`);
      }
    });
    await new Promise<void>((resolve) => ws.once('close', () => resolve()));
    if (keys.isTTY === true) keys.setRawMode?.(false);
    keys.off('data', onKeys);
    keys.off('end', onEnd);
    stdout.off('resize', onResize);
    keys.pause();
    return exitCode;
  }

  async open(sessionId: string | undefined): Promise<number> {
    const sandbox = await this.connect(sessionId);
    const url = sandbox.previewUrl(numberOf(this.values.port, '--port'));
    this.io.stdout.write(`${url}\n`);
    return 0;
  }

  async ps(sessionId: string | undefined): Promise<number> {
    const list = await (await this.connect(sessionId)).processes.list();
    this.print(list, () =>
      list
        .map((p) => {
          const status = p.state === 'exited' ? `exited ${p.exitCode ?? ''}` : p.state;
          return `${String(p.pid).padStart(7)}  ${p.id}  ${status.padEnd(10)}  ${p.command}`;
        })
        .join('\n'),
    );
    return 0;
  }

  /** A run's output: stdout here, stderr on stderr; with --follow, live until it ends. */
  async logs(sessionId: string | undefined, ref: string | undefined): Promise<number> {
    if (ref === undefined) throw new UsageError('logs needs a session id and a pid');
    const sandbox = await this.connect(sessionId);
    const target = /^\d+$/.test(ref) ? Number(ref) : ref;
    if (this.values.follow !== true) {
      const output = await sandbox.processes.output(target);
      // As run and exec: the program's own output, unless --json asks for the whole answer.
      if (this.values.json === true) this.io.stdout.write(`${JSON.stringify(output)}\n`);
      else {
        this.io.stdout.write(output.stdout);
        this.io.stderr.write(output.stderr);
      }
      return 0;
    }
    for await (const event of sandbox.processes.follow(target)) {
      if (this.values.json === true) this.io.stdout.write(`${JSON.stringify(event)}\n`);
      else if (event.type === 'stdout') this.io.stdout.write(event.data);
      else if (event.type === 'stderr') this.io.stderr.write(event.data);
      else if (event.type === 'gap') this.io.stderr.write('[… output dropped at the cap …]\n');
    }
    return 0;
  }

  async kill(sessionId: string | undefined, pid: string | undefined): Promise<number> {
    const killed = await (await this.connect(sessionId)).processes.kill(numberOf(pid, 'PID'));
    this.print(killed, () => `killed ${killed.killed}: ${killed.pids.join(' ')}`);
    return 0;
  }

  async rm(sessionIds: string[]): Promise<number> {
    if (sessionIds.length === 0) throw new UsageError('rm needs a session id');
    for (const id of sessionIds) {
      await (await this.connect(id)).delete();
      if (!this.jsonOut) this.io.stdout.write(`deleted ${id}\n`);
    }
    if (this.jsonOut) this.io.stdout.write(`${JSON.stringify({ deleted: sessionIds })}\n`);
    return 0;
  }
}

/** Runs one command; resolves with the process's exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const dashes = argv.indexOf('--');
  const own = dashes < 0 ? [...argv] : argv.slice(0, dashes);
  const rest = dashes < 0 ? [] : argv.slice(dashes + 1);
  let parsed;
  try {
    parsed = parseArgs({ args: own, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    io.stderr.write(`sandbox: ${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...args] = positionals;
  if (values.help === true || command === undefined) {
    (values.help === true ? io.stdout : io.stderr).write(`${USAGE}\n`);
    return values.help === true ? 0 : 2;
  }
  const cli = new Cli(io, values);
  try {
    switch (command) {
      case 'create':
        return await cli.create();
      case 'ls':
        return await cli.ls(args[0]);
      case 'info':
        return await cli.info(args[0]);
      case 'run':
        return await cli.run(args[0]);
      case 'exec':
        return await cli.exec(args[0], rest);
      case 'cp':
        return await cli.cp(args[0], args[1]);
      case 'open':
        return await cli.open(args[0]);
      case 'terminal':
        return await cli.terminal(args[0]);
      case 'ps':
        return await cli.ps(args[0]);
      case 'logs':
        return await cli.logs(args[0], args[1]);
      case 'kill':
        return await cli.kill(args[0], args[1]);
      case 'rm':
        return await cli.rm(args);
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`sandbox: ${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof SandboxError) {
      const request = err.requestId === undefined ? '' : `, request ${err.requestId}`;
      io.stderr.write(`sandbox: ${err.message} (${err.code}${request})\n`);
      return 1;
    }
    io.stderr.write(`sandbox: ${(err as Error).message}\n`);
    return 1;
  }
}
