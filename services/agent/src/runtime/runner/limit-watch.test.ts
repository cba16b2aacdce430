import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFull, LimitLedger, limitsExceeded, readLimitCounters } from './limit-watch';

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
