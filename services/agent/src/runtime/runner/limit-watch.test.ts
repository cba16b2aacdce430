import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  isFull,
  LimitLedger,
  limitsExceeded,
  readLimitCounters,
  type CounterFiles,
} from './limit-watch';

describe('limit watch', () => {
  const max = { memoryMb: 512, processes: 256 };
  const zero = { oomKills: 0, forkRefusals: 0 };

  it('reports what grew during a run', () => {
    expect(limitsExceeded(zero, zero, { full: false, sizeMb: 1024 }, max)).toEqual([]);
    expect(
      limitsExceeded(zero, { oomKills: 1, forkRefusals: 3 }, { full: true, sizeMb: 1024 }, max),
    ).toEqual([
      { limit: 'memory', max: 512 },
      { limit: 'disk', max: 1024 },
      { limit: 'processes', max: 256 },
    ]);
    expect(
      limitsExceeded(
        { oomKills: 2, forkRefusals: 1 },
        { oomKills: 2, forkRefusals: 1 },
        undefined,
        max,
      ),
    ).toEqual([]);
  });

  it('reads counters of a real process and a real filesystem', async () => {
    const counters = readLimitCounters(process.pid);
    expect(counters.oomKills).toBeGreaterThanOrEqual(0);
    expect(counters.forkRefusals).toBeGreaterThanOrEqual(0);
    const disk = isFull(await mkdtemp(join(tmpdir(), 'limit-watch-')));
    expect(disk.sizeMb).toBeGreaterThan(0);
  });

  it('counts what grew after the last report with the next run, and no growth twice', () => {
    const ledger = new LimitLedger();
    const container = { id: 'c1', pid: process.pid };
    const one = { oomKills: 0, forkRefusals: 1 };
    const five = { oomKills: 0, forkRefusals: 5 };
    // First run: starts from the counters it reads (this process's own, here).
    const now = ledger.baseline(container);
    expect(now).toEqual(readLimitCounters(process.pid));
    expect(ledger.settle('c1', one, one)).toEqual(one); // nothing grew
    // A background process hits the limit between runs: the next run starts from the report.
    const second = ledger.baseline(container);
    expect(second).toEqual(one);
    expect(limitsExceeded(ledger.settle('c1', second, five), five, undefined, max)).toEqual([
      { limit: 'processes', max: 256 },
    ]);
    // Two runs at once: the growth both saw is reported by the first to end only.
    const a = ledger.baseline(container);
    const b = ledger.baseline(container);
    const seven = { oomKills: 1, forkRefusals: 7 };
    expect(limitsExceeded(ledger.settle('c1', a, seven), seven, undefined, max)).toHaveLength(2);
    expect(limitsExceeded(ledger.settle('c1', b, seven), seven, undefined, max)).toEqual([]);
  });

  it('reads a container through the ledger as directly', () => {
    const ledger = new LimitLedger();
    const container = { id: 'c1', pid: process.pid };
    expect(ledger.read(container)).toEqual(readLimitCounters(process.pid));
    expect(ledger.read(container)).toEqual(readLimitCounters(process.pid));
  });
});

describe('limit watch: counter files kept open', () => {
  /** Counter files of fake containers under a temporary directory, one pair per pid. */
  async function fakeCgroups(): Promise<{ locate: (pid: number) => CounterFiles; dir: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'limit-files-'));
    const locate = (pid: number) => ({
      memoryEvents: join(dir, `${pid}.memory`),
      pidsEvents: join(dir, `${pid}.pids`),
    });
    return { locate, dir };
  }
  const write = (files: CounterFiles, oom: number, max: number) => {
    writeFileSync(files.memoryEvents, `oom 0\noom_kill ${oom}\n`);
    writeFileSync(files.pidsEvents, `max ${max}\n`);
  };
  const openFds = () => readdirSync('/proc/self/fd').length;

  it('reads each counter anew from its start, as it grows', async () => {
    const { locate } = await fakeCgroups();
    const ledger = new LimitLedger(4096, locate);
    write(locate(10), 0, 1);
    expect(ledger.read({ id: 'c1', pid: 10 })).toEqual({ oomKills: 0, forkRefusals: 1 });
    write(locate(10), 2, 12345);
    expect(ledger.read({ id: 'c1', pid: 10 })).toEqual({ oomKills: 2, forkRefusals: 12345 });
  });

  it('closes the files of a container that ended, or restarted with another init', async () => {
    const { locate } = await fakeCgroups();
    const ledger = new LimitLedger(4096, locate);
    write(locate(10), 1, 0);
    write(locate(11), 3, 0);
    const before = openFds();
    ledger.read({ id: 'c1', pid: 10 });
    expect(openFds()).toBe(before + 2);
    // Restarted: another init, its own files; the first's are closed.
    expect(ledger.read({ id: 'c1', pid: 11 }).oomKills).toBe(3);
    expect(openFds()).toBe(before + 2);
    ledger.forget('c1');
    expect(openFds()).toBe(before);
    expect(ledger.openCount).toBe(0);
    ledger.forget('c1'); // twice: nothing
  });

  it('keeps at most its bound of containers open, closing the oldest', async () => {
    const { locate } = await fakeCgroups();
    const ledger = new LimitLedger(4096, locate, 2);
    for (const pid of [1, 2, 3]) write(locate(pid), pid, 0);
    const before = openFds();
    for (const pid of [1, 2, 3]) ledger.read({ id: `c${pid}`, pid });
    expect(ledger.openCount).toBe(2);
    expect(openFds()).toBe(before + 4);
    // The one closed is read again from its paths.
    expect(ledger.read({ id: 'c1', pid: 1 }).oomKills).toBe(1);
    for (const id of ['c1', 'c2', 'c3']) ledger.forget(id);
    expect(openFds()).toBe(before);
  });

  it('opens a path again when its file cannot be read; counts 0 until it can', async () => {
    const { locate } = await fakeCgroups();
    const ledger = new LimitLedger(4096, locate);
    const files = locate(20);
    // Opened, but unreadable (a directory): as a removed cgroup's file (ENODEV).
    mkdirSync(files.memoryEvents);
    writeFileSync(files.pidsEvents, 'max 4\n');
    expect(ledger.read({ id: 'c1', pid: 20 })).toEqual({ oomKills: 0, forkRefusals: 4 });
    rmSync(files.memoryEvents, { recursive: true });
    expect(ledger.read({ id: 'c1', pid: 20 })).toEqual({ oomKills: 0, forkRefusals: 4 });
    writeFileSync(files.memoryEvents, 'oom_kill 7\n');
    expect(ledger.read({ id: 'c1', pid: 20 })).toEqual({ oomKills: 7, forkRefusals: 4 });
    ledger.forget('c1');
  });
});
