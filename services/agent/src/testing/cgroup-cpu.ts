import { readdir, readFile } from 'node:fs/promises';

/**
 * For tests and benchmarks (the agent does not use it): a reader of the CPU time, in
 * microseconds, that the cgroup of process `pid` (a container's init) has used: cgroup v1's
 * `cpuacct.usage`, or v2's `cpu.stat`. The cgroup is found once; each call reads its counter.
 */
export async function cgroupCpuReader(pid: number): Promise<() => Promise<number>> {
  const lines = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).split('\n');
  const v1 = lines
    .map((l) => /^\d+:(?:[\w,]*,)?cpuacct(?:,[\w,]*)?:(.*)$/.exec(l)?.[1])
    .find(Boolean);
  if (v1 !== undefined) {
    const dir = (await readdir('/sys/fs/cgroup')).find((d) => d.split(',').includes('cpuacct'));
    if (dir === undefined) throw new Error('no cpuacct hierarchy under /sys/fs/cgroup');
    const file = `/sys/fs/cgroup/${dir}${v1}/cpuacct.usage`;
    return async () => Number(await readFile(file, 'utf8')) / 1000;
  }
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2 === undefined) throw new Error(`no cgroup of process ${pid}`);
  const file = `/sys/fs/cgroup${v2.slice(3)}/cpu.stat`;
  return async () => {
    const usec = /^usage_usec (\d+)$/m.exec(await readFile(file, 'utf8'))?.[1];
    if (usec === undefined) throw new Error(`no usage_usec in ${file}`);
    return Number(usec);
  };
}
