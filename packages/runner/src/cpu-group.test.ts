import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPU_GROUP_EXIT_CODE, inCpuGroup, splitsCpu } from './cpu-group';

describe('inCpuGroup', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cpu-group-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes 0 (the writer itself) to the group, then becomes the command with its arguments', () => {
    const procs = join(dir, 'cgroup.procs');
    writeFileSync(procs, '');
    const [file = '', ...args] = inCpuGroup(['/bin/echo', 'a b', '$HOME'], procs);
    const result = spawnSync(file, args, { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('a b $HOME\n');
    expect(readFileSync(procs, 'utf8')).toBe('0\n');
    expect(splitsCpu(procs)).toBe(true);
  });

  it('does not start the command when the group cannot be entered', () => {
    const procs = join(dir, 'missing', 'cgroup.procs');
    const marker = join(dir, 'ran');
    const [file = '', ...args] = inCpuGroup(['/bin/touch', marker], procs);
    const result = spawnSync(file, args, { encoding: 'utf8' });
    expect(result.status).toBe(CPU_GROUP_EXIT_CODE);
    expect(result.stderr).toContain("could not enter the session's CPU limit");
    expect(() => readFileSync(marker)).toThrow();
    expect(splitsCpu(procs)).toBe(false);
  });
});
