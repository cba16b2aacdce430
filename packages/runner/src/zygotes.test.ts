import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { RUNNER_DIR, zygoteWarmMarker } from './runner-dir';
import type { SpawnedRun } from './spawner';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processRunning, Zygotes } from './zygotes';

/** A spawner whose zygotes never exit; each gets the next pid. */
function fakeSpawner(firstPid: number) {
  let pid = firstPid;
  return {
    available: true,
    spawn: () =>
      Promise.resolve({
        pid: pid++,
        exited: new Promise(() => undefined),
      } as unknown as SpawnedRun),
  };
}

const PID = 900_000 + (process.pid % 10_000);

describe('Zygotes.settled', () => {
  beforeAll(() => mkdirSync(RUNNER_DIR, { recursive: true }));
  afterEach(() => rmSync(zygoteWarmMarker(PID), { force: true }));

  it('resolves only once the ready zygote says it is warm', async () => {
    const zygotes = new Zygotes(fakeSpawner(PID), __filename);
    zygotes.prepare();
    let settled = false;
    const waiting = zygotes.settled().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(settled).toBe(false);
    writeFileSync(zygoteWarmMarker(PID), '');
    await waiting;
    expect(zygotes.waitingPid()).toBe(PID);
  });

  it('gives up waiting after its bound, for a zygote that never warms', async () => {
    const zygotes = new Zygotes(fakeSpawner(PID), __filename);
    zygotes.prepare();
    const started = Date.now();
    await zygotes.settled(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('resolves at once where no zygote is used', async () => {
    const zygotes = new Zygotes({ ...fakeSpawner(PID), available: false }, __filename);
    zygotes.prepare();
    await zygotes.settled(60_000);
    expect(zygotes.waitingPid()).toBeUndefined();
  });
});

describe('Zygotes.take', () => {
  /** A spawner whose one zygote starts when the test says so. */
  function slowSpawner() {
    let start: (() => void) | undefined;
    return {
      spawner: {
        available: true,
        spawn: () =>
          new Promise<SpawnedRun>((resolve) => {
            start = () =>
              resolve({ pid: PID, exited: new Promise(() => undefined) } as unknown as SpawnedRun);
          }),
      },
      started: () => start?.(),
    };
  }

  /** Zygotes of `spawner` whose processes all run (their pids are made up). */
  const zygotesOf = (spawner: ReturnType<typeof slowSpawner>['spawner']) =>
    new Zygotes(spawner, __filename, undefined, () => true);

  it('waits for the zygote that is starting rather than answer none', async () => {
    const { spawner, started } = slowSpawner();
    const zygotes = zygotesOf(spawner);
    zygotes.prepare();
    const taken = zygotes.take(10_000);
    setTimeout(started, 50);
    expect((await taken)?.pid).toBe(PID);
    expect(zygotes.waitingPid()).toBeUndefined();
  });

  it('answers none after its bound when the zygote does not start in time', async () => {
    const { spawner, started } = slowSpawner();
    const zygotes = zygotesOf(spawner);
    zygotes.prepare();
    expect(await zygotes.take(50)).toBeUndefined();
    started();
    // The late one is kept for the next run.
    expect((await zygotes.take(1_000))?.pid).toBe(PID);
  });

  it('answers none for a zygote killed whose exit is not reported yet, and keeps none', async () => {
    const { spawner, started } = slowSpawner();
    let alive = true;
    const zygotes = new Zygotes(spawner, __filename, undefined, () => alive);
    zygotes.prepare();
    started();
    await zygotes.settled(50);
    expect(zygotes.waitingPid()).toBe(PID);
    alive = false; // the user's kill-all; the spawner has not reported its exit
    expect(await zygotes.take(1_000)).toBeUndefined();
    expect(zygotes.waitingPid()).toBeUndefined();
  });

  it('answers none at once when none is ready or starting', async () => {
    const zygotes = new Zygotes({ ...fakeSpawner(PID), available: false }, __filename);
    zygotes.prepare();
    expect(await zygotes.take(60_000)).toBeUndefined();
  });
});

describe('processRunning', () => {
  const proc = mkdtempSync(join(tmpdir(), 'proc-'));
  const stat = (pid: number, state: string) => {
    mkdirSync(join(proc, String(pid)));
    writeFileSync(join(proc, String(pid), 'stat'), `${pid} (node (x)) ${state} 1 1 1`);
  };
  afterAll(() => rmSync(proc, { recursive: true, force: true }));

  it('tells a running process from a zombie and from one that is gone', () => {
    stat(10, 'S');
    stat(11, 'Z');
    expect(processRunning(10, proc)).toBe(true);
    expect(processRunning(11, proc)).toBe(false);
    expect(processRunning(12, proc)).toBe(false);
    expect(processRunning(process.pid)).toBe(true);
  });
});
