import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Spawner, type SpawnOptions } from './spawner';

/** The helper compiled from its source, as scripts/build-sandbox-image compiles it. */
const dir = mkdtempSync(join(tmpdir(), 'spawner-'));
const binary = join(dir, 'spawner');
const native = join(__dirname, '../native');
execFileSync('gcc', [
  '-O2',
  '-Wall',
  '-Werror',
  '-o',
  binary,
  ...readdirSync(native)
    .filter((name) => name.endsWith('.c'))
    .map((name) => join(native, name)),
]);

const env = { PATH: '/usr/bin:/bin', GREETING: 'hello' };
const options: SpawnOptions = { cwd: dir, env, enterCpuGroup: false };

function collect(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) =>
    stream.on('end', () => resolve(Buffer.concat(chunks).toString())),
  );
}

const spawners: Spawner[] = [];
function newSpawner(cpuProcs = ''): Spawner {
  const spawner = new Spawner(binary, cpuProcs);
  spawners.push(spawner);
  return spawner;
}

/** `script` run by bash through a new spawner, with the common options. */
const bash = (script: string) => newSpawner().spawn(['/bin/bash', '-c', script], options);
afterAll(() => spawners.forEach((spawner) => spawner.close()));

describe('Spawner: runs, their output, usage and sessions', () => {
  it('runs a command in its directory with its environment, and relays its output and exit', async () => {
    const run = await newSpawner().spawn(
      ['/bin/bash', '-c', 'echo "$GREETING from $PWD"; echo oops >&2; cat; exit 3'],
      options,
    );
    const [stdout, stderr, exit] = await Promise.all([
      collect(run.stdout),
      collect(run.stderr),
      run.exited,
    ]);
    expect(stdout).toBe(`hello from ${dir}\n`); // and `cat` found stdin at its end
    expect(stderr).toBe('oops\n');
    expect(exit).toMatchObject({ code: 3, signal: null });
  });

  it("sends a turn's events in one write, not two writes per event", async () => {
    const run = await newSpawner().spawn(['/bin/sh', '-c', 'read x; echo "$x"'], {
      ...options,
      stdin: true,
    });
    // The helper is the run's parent (vfork); its write calls, as the kernel counts them.
    const stat = readFileSync(`/proc/${run.pid}/stat`, 'utf8');
    const helper = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
    const writes = () =>
      Number(/^syscw: (\d+)$/m.exec(readFileSync(`/proc/${helper}/io`, 'utf8'))?.[1]);
    const before = writes();
    const output = collect(run.stdout);
    await run.input?.write(Buffer.from('hi\n'));
    await Promise.all([output, collect(run.stderr), run.exited]);
    expect(await output).toBe('hi\n');
    // The input's write to the run; the run's own writes, which the kernel adds to its parent's
    // counts when it reaps it: its oom_score_adj before exec, and its output; then the events
    // 'a', 'o', 'c', 'c', 'x': five turns at the most on a busy machine, one write each (ten
    // when each event took two, for 13 in all).
    expect(writes() - before).toBeLessThanOrEqual(8);
  });

  it('reports the CPU time and peak memory the run used, as GNU time did', async () => {
    const run = await bash(
      'x=$(head -c 30000000 /dev/zero | tr "\\0" a); i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done',
    );
    void collect(run.stdout);
    void collect(run.stderr);
    const exit = await run.exited;
    expect(exit.cpuTimeMs).toBeGreaterThan(10);
    expect(exit.maxRssBytes).toBeGreaterThan(30_000_000);
  });

  it("makes each run the OOM killer's first choice, and what it starts too", async () => {
    const run = await newSpawner().spawn(
      ['/bin/sh', '-c', 'cat /proc/self/oom_score_adj; sh -c "cat /proc/self/oom_score_adj"'],
      options,
    );
    const [stdout] = await Promise.all([collect(run.stdout), run.exited]);
    expect(stdout).toBe('1000\n1000\n');
  });

  it('starts each run as the leader of a session and process group of its own', async () => {
    const run = await bash(
      'read -r _ _ _ _ pgrp session _ </proc/$$/stat; echo "$$ $pgrp $session"',
    );
    const [stdout] = await Promise.all([collect(run.stdout), run.exited]);
    expect(stdout.trim()).toBe(`${run.pid} ${run.pid} ${run.pid}`);
  });
});

describe('Spawner: signals, CPU groups and paused readers', () => {
  it('reports a run killed by a signal', async () => {
    const run = await bash('kill -TERM $$');
    await expect(run.exited).resolves.toMatchObject({ code: null, signal: 'SIGTERM' });
  });

  it('enters the CPU group before the command starts, or does not start it', async () => {
    const procs = join(dir, 'cgroup.procs');
    writeFileSync(procs, '');
    const entered = await newSpawner(procs).spawn(['/bin/true'], {
      ...options,
      enterCpuGroup: true,
    });
    await expect(entered.exited).resolves.toMatchObject({ code: 0 });
    expect(readFileSync(procs, 'utf8')).toBe('0');

    const refused = await newSpawner('').spawn(['/bin/true'], { ...options, enterCpuGroup: true });
    const [stderr, exit] = await Promise.all([collect(refused.stderr), refused.exited]);
    expect(stderr).toMatch(/could not enter the session's CPU limit/);
    expect(exit.code).toBe(125);
  });

  it('holds a run whose output is not taken, and lets it go on when it is', async () => {
    const run = await bash('head -c 5000000 /dev/zero');
    void collect(run.stderr);
    let exited = false;
    void run.exited.then(() => (exited = true));
    run.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(exited).toBe(false); // blocked on a full pipe
    const stdout = await collect(run.stdout.resume());
    await run.exited;
    expect(stdout.length).toBe(5_000_000);
  });

  it('relays what a paused run wrote before its exit ahead of the exit', async () => {
    // 20 KB fill the reader (its buffer is over its mark: the helper is told to pause), then
    // 40 KB wait in the pipe when the run ends.
    const run = await newSpawner().spawn(
      ['/bin/bash', '-c', 'head -c 20000 /dev/zero; sleep 0.3; head -c 40000 /dev/zero'],
      options,
    );
    void collect(run.stderr);
    run.stdout.pause();
    await run.exited;
    expect(run.stdout.readableLength).toBe(60_000);
  });

  it('reads no more than a few chunks ahead of a paused reader of a fast run', async () => {
    const run = await bash('cat /dev/zero');
    void collect(run.stderr);
    run.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(run.stdout.readableLength).toBeLessThan(1_000_000);
    process.kill(-run.pid, 'SIGKILL');
    run.stdout.resume();
    await run.exited;
  });
});

describe('Spawner: stdin and terminals', () => {
  it('writes stdin to a run started with it, in order, and closes it', async () => {
    const run = await newSpawner().spawn(['/bin/cat'], { ...options, stdin: true });
    void collect(run.stderr);
    const stdout = collect(run.stdout);
    await run.input?.write(Buffer.from('hello'));
    await run.input?.write(Buffer.from(' world'));
    await run.input?.end();
    expect(await stdout).toBe('hello world');
    expect(await run.exited).toMatchObject({ code: 0 });
  });

  it('holds a stdin write until the run reads it (backpressure), then takes it whole', async () => {
    const run = await newSpawner().spawn(['/bin/sh', '-c', 'sleep 0.5; wc -c'], {
      ...options,
      stdin: true,
    });
    void collect(run.stderr);
    const stdout = collect(run.stdout);
    let taken = false;
    const write = run.input?.write(Buffer.alloc(300_000, 1)).then(() => (taken = true));
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(taken).toBe(false); // more than a pipe holds, and nobody reads yet
    await write;
    await run.input?.end();
    expect((await stdout).trim()).toBe('300000');
  });

  it('runs a command on a terminal of the given size, resized later', async () => {
    const run = await newSpawner().spawn(
      ['/bin/sh', '-c', 'tty; stty size; read line; echo "got $line"; read x; stty size'],
      { ...options, terminal: { cols: 100, rows: 30 } },
    );
    let text = '';
    run.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const ended = new Promise((resolve) => run.stdout.on('end', resolve));
    await run.input?.write(Buffer.from('abc\r'));
    // Resized once the program has read its first line: its first size is then printed (a
    // fixed wait raced the shell's start on a loaded machine).
    while (!text.includes('got abc')) await new Promise((resolve) => setTimeout(resolve, 20));
    run.input?.resize({ cols: 120, rows: 40 });
    await run.input?.write(Buffer.from('\r'));
    await ended;
    expect(text).toMatch(/\/dev\/pts\/\d+/);
    expect(text).toContain('30 100');
    expect(text).toContain('got abc');
    expect(text).toContain('40 120');
    expect(await run.exited).toMatchObject({ code: 0 });
    expect(await collect(run.stderr)).toBe('');
  });

  it("interrupts a terminal's program with ^C, as a terminal does", async () => {
    const run = await newSpawner().spawn(
      [
        '/bin/sh',
        '-c',
        'trap "echo interrupted; exit 3" INT; echo ready; while :; do sleep 0.05; done',
      ],
      { ...options, terminal: { cols: 80, rows: 24 } },
    );
    let text = '';
    run.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    while (!text.includes('ready')) await new Promise((resolve) => setTimeout(resolve, 20));
    await run.input?.write(Buffer.from('\x03'));
    expect(await run.exited).toMatchObject({ code: 3 });
    expect(text).toContain('interrupted');
  });
});

describe('Spawner: what cannot start, and helpers gone', () => {
  it('refuses what cannot start: a missing directory, a NUL byte', async () => {
    const spawner = newSpawner();
    await expect(
      spawner.spawn(['/bin/true'], { ...options, cwd: join(dir, 'missing') }),
    ).rejects.toMatchObject({ code: 'internal_error' });
    await expect(spawner.spawn(['/bin/echo', 'a\0b'], options)).rejects.toMatchObject({
      code: 'invalid_request',
    });
    const run = await spawner.spawn(['/bin/true'], options);
    await expect(run.exited).resolves.toMatchObject({ code: 0 });
  });

  it('fails the runs of a helper that was killed, and starts a new one for the next', async () => {
    const spawner = newSpawner();
    const run = await spawner.spawn(['/bin/sleep', '5'], options);
    const helper = spawner.pid;
    process.kill(helper ?? 0, 'SIGKILL');
    await expect(run.exited).rejects.toMatchObject({ code: 'internal_error' });
    process.kill(run.pid, 'SIGKILL');
    const next = await spawner.spawn(['/bin/echo', 'again'], options);
    await expect(collect(next.stdout)).resolves.toBe('again\n');
    expect(spawner.pid).not.toBe(helper);
  });

  it('hangs up the runs of a runner that is gone, kills what is left of their commands, spares nohup', async () => {
    const spawner = newSpawner();
    const plain = await spawner.spawn(['/bin/sleep', '30'], options);
    const deaf = await spawner.spawn(
      ['/bin/bash', '-c', 'trap "" HUP; while :; do sleep 0.05; done'],
      options,
    );
    const withBackground = await spawner.spawn(
      ['/bin/bash', '-c', 'nohup sleep 30 >/dev/null 2>&1 & echo $!; sleep 30'],
      options,
    );
    const backgroundPid = Number(
      (await new Promise<Buffer>((ok) => withBackground.stdout.once('data', ok))).toString(),
    );
    for (const run of [plain, deaf, withBackground]) run.exited.catch(() => undefined);
    await sleep(200); // nohup has set its hangup aside and become sleep
    spawner.close(); // as when the runner exits or is killed: the helper's stdin closes
    await sleep(1500);
    expect([plain.pid, deaf.pid, withBackground.pid].filter(alive)).toEqual([]);
    expect(alive(backgroundPid)).toBe(true);
    process.kill(backgroundPid, 'SIGKILL');
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `pid` runs (a zombie does not: it is only waiting to be reaped). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
