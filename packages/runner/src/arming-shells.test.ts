import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARMED_SHELL_ARGV, armingShells } from './arming-shells';

describe('armingShells', () => {
  const proc = mkdtempSync(join(tmpdir(), 'proc-'));
  afterAll(() => rmSync(proc, { recursive: true, force: true }));
  const processOf = (pid: number, argv: string[], fd3?: 'pipe' | 'file') => {
    mkdirSync(join(proc, String(pid), 'fd'), { recursive: true });
    writeFileSync(join(proc, String(pid), 'cmdline'), `${argv.join('\0')}\0`);
    if (fd3 === 'pipe') execFileSync('mkfifo', [join(proc, String(pid), 'fd', '3')]);
    if (fd3 === 'file') writeFileSync(join(proc, String(pid), 'fd', '3'), '');
  };
  const SPAWNER = ['/opt/sandbox/runner/run-spawner', '/run/sandbox/cpu.procs', '1000'];
  const script = `${ARMED_SHELL_ARGV[2]}|| exit 0; IFS= read -r -u 3 -N 4096 BASH_EXECUTION_STRING`;

  it("names the spawner's children that are shells being armed, and no run", () => {
    processOf(10, SPAWNER);
    processOf(11, SPAWNER); // vforked, not yet exec'd
    processOf(12, ['/bin/bash', '-c', script], 'pipe'); // armed, waiting on its pipe
    processOf(13, ['/bin/bash', '-c', script], 'file'); // the user's look-alike: no pipe
    processOf(14, ['/bin/bash', '-c', 'sleep 300']); // a run
    processOf(15, ['/bin/bash', '-c', script], 'pipe'); // not the spawner's child
    const all = [
      { pid: 10, ppid: 1 },
      { pid: 11, ppid: 10 },
      { pid: 12, ppid: 10 },
      { pid: 13, ppid: 10 },
      { pid: 14, ppid: 10 },
      { pid: 15, ppid: 1 },
      { pid: 16, ppid: 10 }, // gone meanwhile
    ];
    expect(armingShells(all, new Set([10]), proc)).toEqual([11, 12]);
    expect(armingShells(all, new Set(), proc)).toEqual([]);
  });
});
