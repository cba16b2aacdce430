import { mkdtempSync } from 'node:fs';
import { readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { RUNNER_LINK_DIR, RUNNER_LINK_ENV, RUNNER_LINK_SOCKET } from '@sandbox/contract';
import { createLogger } from '@sandbox/logger';
import { dockerFrame } from './docker-stream';
import { linkRunner, type LinkOptions } from './runner-link';

const logger = createLogger({ name: 'test', level: 'silent' });

function connected(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => resolve(socket)).once('error', reject);
  });
}

/**
 * A link directory and a `start` that hands back an exec stream in memory and, like a runner,
 * does what `runner` says with the variables it was started with.
 */
function setup(runner: (env: Record<string, string>, exec: PassThrough) => void | Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'link-'));
  const exec = new PassThrough();
  const started: string[][] = [];
  const options: LinkOptions = {
    dir,
    owner: { uid: process.getuid!(), gid: process.getgid!() },
    logger,
    timeoutMs: 2000,
    start: (env) => {
      started.push(env);
      const vars: Record<string, string> = Object.fromEntries(
        env.map((e): [string, string] => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
      );
      // The socket's path in the sandbox is RUNNER_LINK_DIR's: here, the directory itself.
      if (vars[RUNNER_LINK_ENV.socket] !== undefined) {
        expect(vars[RUNNER_LINK_ENV.socket]).toBe(`${RUNNER_LINK_DIR}/${RUNNER_LINK_SOCKET}`);
        vars[RUNNER_LINK_ENV.socket] = join(dir, RUNNER_LINK_SOCKET);
      }
      void runner(vars, exec);
      return Promise.resolve(exec);
    },
  };
  return { dir, exec, started, options };
}

describe('linkRunner', () => {
  it("takes the connection that says the launch's token, drops the others, and stops listening", async () => {
    let stranger: Socket | undefined;
    let mode = 0;
    const { dir, options } = setup(async (env) => {
      const path = env[RUNNER_LINK_ENV.socket]!;
      mode = (await stat(path)).mode & 0o777;
      stranger = await connected(path);
      stranger.write('not-the-token\n');
      const runner = await connected(path);
      runner.write(`${env[RUNNER_LINK_ENV.token]}\n{"ev":"pong","id":1}\n`);
    });
    const { stream, framed } = await linkRunner(options);
    expect(framed).toBe(false);
    // Open to the sandbox's root alone (here, this test's user).
    expect(mode).toBe(0o600);
    const said = new Promise<string>((resolve) => stream.once('data', (b) => resolve(String(b))));
    stream.resume();
    // What came after the token is the runner's first answer.
    expect(await said).toBe('{"ev":"pong","id":1}\n');
    expect(await readdir(dir)).toEqual([]);
    await new Promise((resolve) =>
      stranger!.destroyed ? resolve(undefined) : stranger!.once('close', resolve),
    );
    stream.destroy();
  });

  it('closes a connection that said nothing once the runner is taken, or the wait is over', async () => {
    let silent: Socket | undefined;
    const { options } = setup(async (env) => {
      const path = env[RUNNER_LINK_ENV.socket]!;
      silent = await connected(path);
      silent.write('no end of line');
      (await connected(path)).write(`${env[RUNNER_LINK_ENV.token]}\n`);
    });
    const { stream } = await linkRunner(options);
    await new Promise((resolve) =>
      silent!.destroyed ? resolve(undefined) : silent!.once('close', resolve),
    );
    stream.destroy();

    let waiting: Socket | undefined;
    const late = setup(async (env) => {
      waiting = await connected(env[RUNNER_LINK_ENV.socket]!);
    });
    const { framed } = await linkRunner({ ...late.options, timeoutMs: 200 });
    expect(framed).toBe(true);
    await new Promise((resolve) =>
      waiting!.destroyed ? resolve(undefined) : waiting!.once('close', resolve),
    );
  });

  it('gives each launch a token of its own', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const { options } = setup(async (env) => {
        tokens.push(env[RUNNER_LINK_ENV.token]!);
        (await connected(env[RUNNER_LINK_ENV.socket]!)).write(`${env[RUNNER_LINK_ENV.token]}\n`);
      });
      (await linkRunner(options)).stream.destroy();
    }
    expect(tokens[0]).toMatch(/^[\w-]{32}$/);
    expect(tokens[1]).not.toBe(tokens[0]);
  });
});

describe('linkRunner: the exec stream and the socket path', () => {
  it('ends the socket with the exec stream, and the exec stream with the socket', async () => {
    const first = setup(async (env) => {
      (await connected(env[RUNNER_LINK_ENV.socket]!)).write(`${env[RUNNER_LINK_ENV.token]}\n`);
    });
    const one = await linkRunner(first.options);
    const closed = new Promise((resolve) => one.stream.once('close', resolve));
    first.exec.end();
    first.exec.resume();
    await closed;

    const second = setup(async (env) => {
      (await connected(env[RUNNER_LINK_ENV.socket]!)).write(`${env[RUNNER_LINK_ENV.token]}\n`);
    });
    const two = await linkRunner(second.options);
    const execClosed = new Promise((resolve) => second.exec.once('close', resolve));
    two.stream.destroy();
    await execClosed;
  });

  it("speaks over the exec stream to a runner that never comes, and fails with a dead runner's words", async () => {
    const silent = setup(() => undefined);
    const fallback = await linkRunner({ ...silent.options, timeoutMs: 100 });
    expect(fallback).toEqual({ stream: silent.exec, framed: true });
    expect(await readdir(silent.dir)).toEqual([]);

    const dead = setup((_env, exec) => {
      exec.write(dockerFrame(2, 'node: cannot start'));
      exec.end();
    });
    await expect(linkRunner(dead.options)).rejects.toThrow(
      'the runner exited before it reached the agent: node: cannot start',
    );
  });

  it('replaces what is at the socket path, a link included, without following it', async () => {
    const { dir, options } = setup(async (env) => {
      (await connected(env[RUNNER_LINK_ENV.socket]!)).write(`${env[RUNNER_LINK_ENV.token]}\n`);
    });
    const target = join(mkdtempSync(join(tmpdir(), 'target-')), 'precious');
    await writeFile(target, 'keep');
    await symlink(target, join(dir, RUNNER_LINK_SOCKET));
    const linked = await linkRunner(options);
    expect(linked.framed).toBe(false);
    linked.stream.destroy();
    const kept = await stat(target);
    expect(kept.isFile()).toBe(true);
    expect(kept.mode & 0o777).not.toBe(0o600);
  });

  it('starts the runner without a link when the directory is gone', async () => {
    const { started, options } = setup(() => undefined);
    const result = await linkRunner({ ...options, dir: join(options.dir, 'gone') });
    expect(result.framed).toBe(true);
    expect(started).toEqual([[]]);
  });
});
