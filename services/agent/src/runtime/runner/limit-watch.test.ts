import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFull, limitsExceeded, readLimitCounters } from './limit-watch';

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
    const counters = await readLimitCounters(process.pid);
    expect(counters.oomKills).toBeGreaterThanOrEqual(0);
    expect(counters.forkRefusals).toBeGreaterThanOrEqual(0);
    const disk = await isFull(await mkdtemp(join(tmpdir(), 'limit-watch-')));
    expect(disk.sizeMb).toBeGreaterThan(0);
  });
});
