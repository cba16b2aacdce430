import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enterCpuGroup, splitsCpu } from './cpu-group';

describe('the CPU group', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cpu-group-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is entered by writing 0 (the writer itself) to its procs file, where the sandbox has one', () => {
    const procs = join(dir, 'cgroup.procs');
    writeFileSync(procs, '');
    expect(splitsCpu(procs)).toBe(true);
    enterCpuGroup(procs);
    expect(readFileSync(procs, 'utf8')).toBe('0');
  });

  it('cannot be entered where the sandbox has none', () => {
    const procs = join(dir, 'missing', 'cgroup.procs');
    expect(splitsCpu(procs)).toBe(false);
    expect(() => enterCpuGroup(procs)).toThrow();
  });
});
