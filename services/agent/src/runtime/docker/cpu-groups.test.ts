import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import { freezerOf } from './cgroup-freezer';
import { cpuControllerMount, CpuGroups, quotaUs } from './cpu-groups';

const CGROUP_V1 = [
  '25 30 0:22 / /sys/fs/cgroup rw,relatime shared:9 - tmpfs tmpfs rw,mode=755',
  '26 25 0:23 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:10 - cgroup cgroup rw,cpu,cpuacct',
  '27 25 0:24 / /sys/fs/cgroup/cpuset rw,relatime shared:11 - cgroup cgroup rw,cpuset',
].join('\n');

describe('cpuControllerMount', () => {
  it("finds the cgroup v1 hierarchy with the cpu controller, not cpuset's", () => {
    expect(cpuControllerMount(CGROUP_V1)).toBe('/sys/fs/cgroup/cpu,cpuacct');
    expect(cpuControllerMount('31 25 0:27 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu')).toBe(
      '/sys/fs/cgroup/cpu',
    );
  });

  it('finds none on a cgroup v2 host', () => {
    expect(
      cpuControllerMount('25 30 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate'),
    ).toBeUndefined();
  });
});

describe('CpuGroups.open', () => {
  it("weighs the group of every session's processes, above the node's own groups", () => {
    const mount = mkdtempSync(join(tmpdir(), 'cpu-groups-'));
    try {
      const groups = CpuGroups.open({
        name: 'io.sandbox.node-a',
        owner: { uid: 0, gid: 0 },
        shares: 2048,
        logger: createLogger({ name: 'test', level: 'silent' }),
        mountinfo: `31 25 0:27 / ${mount} rw - cgroup cgroup rw,cpu`,
      });
      expect(groups?.root).toBe(join(mount, 'sandbox', 'io.sandbox.node-a'));
      expect(readFileSync(join(mount, 'sandbox', 'cpu.shares'), 'utf8')).toBe('2048');
    } finally {
      rmSync(mount, { recursive: true, force: true });
    }
  });
});

describe('quotaUs', () => {
  it('is CPUs × the 100 ms period, at least 1 ms', () => {
    expect(quotaUs(0.25)).toBe(25_000);
    expect(quotaUs(2)).toBe(200_000);
    expect(quotaUs(0.001)).toBe(1000);
  });
});

describe('freezerOf (cgroup-freezer.ts)', () => {
  const id = 'a'.repeat(64);
  it("finds cgroup v1's freezer.state of the process's group", () => {
    const mountinfo = `${CGROUP_V1}\n28 25 0:25 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer`;
    const cgroup = `6:freezer:/docker/${id}\n2:cpu,cpuacct:/docker/${id}\n0::/`;
    expect(freezerOf(cgroup, mountinfo)).toMatchObject({
      path: `/sys/fs/cgroup/freezer/docker/${id}/freezer.state`,
      frozen: 'FROZEN',
      thawed: 'THAWED',
    });
  });

  it("finds cgroup v2's cgroup.freeze, and says frozen from cgroup.events", () => {
    const mountinfo = '25 30 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';
    expect(freezerOf(`0::/system.slice/docker-${id}.scope`, mountinfo)).toEqual({
      path: `/sys/fs/cgroup/system.slice/docker-${id}.scope/cgroup.freeze`,
      frozen: '1',
      thawed: '0',
      statePath: `/sys/fs/cgroup/system.slice/docker-${id}.scope/cgroup.events`,
      frozenLine: 'frozen 1',
    });
  });

  it('finds none where no freezer is mounted', () => {
    expect(freezerOf(`6:freezer:/docker/${id}`, CGROUP_V1)).toBeUndefined();
  });
});
