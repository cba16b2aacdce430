import { PassThrough } from 'node:stream';
import { CodeContext } from './code-context';
import { CodeContexts } from './contexts';
import type { ContextInfo } from './protocol';
import { frameMark } from './frames';
import type { SpawnExit, SpawnedRun } from './spawner';

const INFO: ContextInfo = {
  contextId: 'ctx_0123456789abcdef01234567',
  language: 'javascript',
  cwd: '/workspace',
  createdAt: 'now',
};

/** A context's process as the runner sees it: it answers each cell with `reply`. */
class FakeProcess {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  token = '';
  private exit: (exit: SpawnExit) => void = () => undefined;
  readonly run: SpawnedRun;

  constructor(
    readonly pid: number,
    private readonly reply: (code: string, fake: FakeProcess) => void,
  ) {
    const exited = new Promise<SpawnExit>((resolve) => (this.exit = resolve));
    this.run = {
      pid,
      stdout: this.stdout,
      stderr: this.stderr,
      exited,
      input: {
        write: (data) => {
          const message = JSON.parse(data.toString()) as { token?: string; code?: string };
          if (message.token !== undefined) {
            this.token = message.token;
            this.answer({ ev: 'ready' });
          } else this.reply(message.code ?? '', this);
          return Promise.resolve();
        },
        end: () => Promise.resolve(),
        resize: () => undefined,
      },
    };
  }

  answer(message: object): void {
    this.stdout.write(`${frameMark(this.token)}${JSON.stringify(message)}\n`);
  }

  endCell(): void {
    this.stderr.write(`${frameMark(this.token)}end\n`);
  }

  die(): void {
    this.exit({ code: null, signal: 'SIGKILL', cpuTimeMs: 0, maxRssBytes: 0 });
  }
}

const made: CodeContext[] = [];
afterEach(() => {
  for (const context of made.splice(0)) void context.stop();
});

function contextWith(reply: (code: string, fake: FakeProcess) => void) {
  const started: FakeProcess[] = [];
  const context = new CodeContext(INFO, {}, () => {
    // Past any pid_max (2^22): a kill of it reaches no real process.
    const fake = new FakeProcess(5_000_000 + started.length, reply);
    started.push(fake);
    return Promise.resolve({ run: fake.run, dir: '/workspace', spare: false });
  });
  made.push(context);
  return { context, started };
}

const read = (stream: PassThrough) =>
  new Promise<string>((resolve) => {
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
    stream.on('end', () => resolve(text));
  });

const cell = (code: string) => ({ code, timeoutMs: 10_000, env: {} });

describe('CodeContext', () => {
  it('gives a cell its output and its answer, once both pipes marked its end', async () => {
    const { context } = contextWith((code, fake) => {
      fake.stdout.write(`out of ${code}`);
      fake.stderr.write('err');
      fake.answer({ ev: 'done', results: [], timedOut: false });
      fake.endCell();
    });
    await context.start();
    const run = await context.run(cell('x'));
    const [stdout, stderr, answer] = await Promise.all([
      read(run.stdout),
      read(run.stderr),
      run.answer,
    ]);
    expect([stdout, stderr, answer.ev]).toEqual(['out of x', 'err', 'done']);
  });

  it('fails the cell under way with context_restarted when its process ends, and starts another', async () => {
    const { context, started } = contextWith((_code, fake) => fake.die());
    await context.start();
    const run = await context.run(cell('process.exit()'));
    await expect(run.answer).rejects.toMatchObject({ code: 'context_restarted' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toHaveLength(2);
  });

  it('fails the cell under way when the context is deleted or restarted', async () => {
    const { context } = contextWith(() => undefined); // never answers
    await context.start();
    const run = await context.run(cell('while (true) {}'));
    void context.stop();
    await expect(run.answer).rejects.toMatchObject({ code: 'context_restarted' });
  });

  it('refuses a second cell while one runs', async () => {
    const { context } = contextWith(() => undefined);
    await context.start();
    await context.run(cell('1'));
    await expect(context.run(cell('2'))).rejects.toMatchObject({ code: 'conflict' });
  });

  it('drops a process whose start a delete overtook', async () => {
    const { context, started } = contextWith(() => undefined);
    const starting = context.start();
    void context.stop();
    await expect(starting).rejects.toMatchObject({ code: 'context_not_found' });
    expect(started).toHaveLength(1);
  });
});

describe('a context whose process never says it is ready', () => {
  it('fails its start past the ready timeout, and ends the process', async () => {
    const fake = new FakeProcess(5_200_000, () => undefined);
    fake.run.input = { ...fake.run.input!, write: () => Promise.resolve() }; // no greeting back
    const killed: number[] = [];
    const kill = jest.spyOn(process, 'kill').mockImplementation((pid) => {
      killed.push(Number(pid));
      fake.die();
      return true;
    });
    try {
      const context = new CodeContext(
        INFO,
        {},
        () => Promise.resolve({ run: fake.run, dir: '/workspace', spare: false }),
        undefined,
        50,
      );
      made.push(context);
      await expect(context.start()).rejects.toMatchObject({
        code: 'internal_error',
        message: expect.stringContaining('did not start within 0.05 s'),
      });
      expect(killed).toEqual([5_200_000]);
    } finally {
      kill.mockRestore();
    }
  });
});

describe('a spare context process', () => {
  const spawned: FakeProcess[] = [];
  const greetings: unknown[] = [];
  let contexts: CodeContexts;

  beforeEach(() => {
    spawned.length = 0;
    greetings.length = 0;
    contexts = new CodeContexts(
      {
        workingDirectory: (cwd) => Promise.resolve(`/real${cwd}`),
        spawn: (dir, env) => {
          const fake = new FakeProcess(5_100_000 + spawned.length, () => undefined);
          const input = fake.run.input!;
          const write = input.write.bind(input);
          input.write = (data) => {
            greetings.push({ hello: JSON.parse(data.toString()) as unknown, spawnedIn: dir, env });
            return write(data);
          };
          spawned.push(fake);
          return Promise.resolve(fake.run);
        },
        spawnShell: () => Promise.reject(new Error('no shell contexts here')),
      },
      10,
    );
  });
  afterEach(() => contexts.close());

  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
  const spec = (env: Record<string, string> = {}) => ({
    language: 'javascript' as const,
    cwd: '/workspace/a',
    env,
  });

  it('is started only after a first create, and serves the next, greeted with its directory and env', async () => {
    await settle();
    expect(spawned).toHaveLength(0); // no context yet: no spare
    await contexts.create(spec());
    await settle();
    expect(spawned).toHaveLength(2); // the first context's own, then the spare
    await contexts.create(spec({ A: '1' }));
    expect(spawned).toHaveLength(2); // the spare served it
    expect(greetings[1]).toMatchObject({
      hello: { cwd: '/real/workspace/a', env: { A: '1' } },
      spawnedIn: '/real/workspace',
      env: {},
    });
    await settle();
    expect(spawned).toHaveLength(3); // armed again
  });

  it('is not used for an env Node reads as it starts, and replaced when it died waiting', async () => {
    await contexts.create(spec());
    await settle();
    await contexts.create(spec({ NODE_OPTIONS: '--max-old-space-size=64' }));
    expect(spawned).toHaveLength(3); // a process of its own: the spare still waits
    spawned[1]!.die();
    await settle();
    await contexts.create(spec());
    expect(spawned.length).toBeGreaterThanOrEqual(4);
    expect(contexts.list()).toHaveLength(3);
  });
});
