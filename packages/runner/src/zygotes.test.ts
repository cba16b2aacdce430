import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { RUNNER_DIR, zygoteWarmMarker } from './runner-dir';
import type { SpawnedRun } from './spawner';
import { Zygotes } from './zygotes';

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
