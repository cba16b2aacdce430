import { memAvailable } from '../runtime/host-memory';
import { readNodeLoad } from './node-load';

describe('memAvailable', () => {
  it('reads MemAvailable in bytes', () => {
    const meminfo = 'MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   12345678 kB\n';
    expect(memAvailable(meminfo)).toBe(12_345_678 * 1024);
  });

  it('is undefined without the line (an old kernel)', () => {
    expect(memAvailable('MemTotal: 1 kB\nMemFree: 1 kB\n')).toBeUndefined();
  });
});

it('reads this host: available memory within the total, at least one CPU', async () => {
  const load = await readNodeLoad();
  expect(load.memoryAvailableBytes).toBeGreaterThan(0);
  expect(load.memoryAvailableBytes).toBeLessThanOrEqual(load.memoryTotalBytes);
  expect(load.cpus).toBeGreaterThanOrEqual(1);
  expect(load.loadAverage).toBeGreaterThanOrEqual(0);
});
