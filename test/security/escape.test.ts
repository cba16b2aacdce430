import { onGvisor } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

/**
 * Escape attempts from inside a session. Each command prints what it achieved; the sandbox
 * must refuse every one of them.
 */

const t = useStackWithAccount('paid', { session: true });

async function run(command: string): Promise<string> {
  const response = await t.api.execute<{ stdout: string; stderr: string }>(t.sessionId, {
    command,
  });
  return response.body.stdout;
}

/** `ok` when `attempt` succeeded, `refused` when it failed. */
const attempt = (command: string) => `(${command}) >/dev/null 2>&1 && echo ok || echo refused`;

describe('escape attempts from inside a session', () => {
  it('has no capabilities at all, and cannot gain any', async () => {
    const status = await run(
      'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status',
    );
    expect(status).toBe(
      [
        'CapInh:\t0000000000000000',
        'CapPrm:\t0000000000000000',
        'CapEff:\t0000000000000000',
        'CapBnd:\t0000000000000000',
        // gVisor's /proc/self/status has no such lines (its Sentry keeps no_new_privs too).
        ...(onGvisor ? [] : ['CapAmb:\t0000000000000000', 'NoNewPrivs:\t1']),
        '',
      ].join('\n'),
    );
  });

  it.each([
    ['mount a filesystem', 'mount -t tmpfs none /tmp'],
    // On gVisor a user namespace is the Sentry's own, and its root still cannot mount.
    onGvisor
      ? ['mount as root of a new user namespace', 'unshare -r mount -t tmpfs none /mnt']
      : ['unshare into a new user namespace with root', 'unshare -r true'],
    ['load a kernel module', 'echo x > /proc/sys/kernel/modprobe'],
    // On gVisor a device node is the Sentry's own: made, it opens nothing of the host's.
    onGvisor
      ? ['read a device node it made', 'mknod /tmp/disk b 8 0; head -c 1 /tmp/disk']
      : ['create a device node', 'mknod /tmp/disk b 8 0'],
    ['read the host disk', 'cat /dev/sda'],
    ['read kernel memory', 'head -c 1 /proc/kcore'],
    ['write a kernel setting', 'echo 1 > /proc/sys/kernel/sysrq'],
    ['trigger sysrq', 'echo b > /proc/sysrq-trigger'],
    ['read password hashes', 'cat /etc/shadow'],
    ['raise its memory limit', 'echo 999999999999 > /sys/fs/cgroup/memory/memory.limit_in_bytes'],
    ['raise its process limit', 'echo max > /sys/fs/cgroup/pids/pids.max'],
    ['raise its CPU limit', 'echo -1 > /sys/fs/cgroup/cpu/cpu.cfs_quota_us'],
    ["leave its CPU group for the container's", 'echo 0 > /sys/fs/cgroup/cpu/cgroup.procs'],
    // The agent's favordynmods hierarchy is the host's root group: mounted, but not writable.
    [
      'make a group in the host-wide favordynmods hierarchy',
      'mkdir /sys/fs/cgroup/sandbox-favordynmods/x',
    ],
    [
      'set release of the favordynmods hierarchy',
      'echo 1 > /sys/fs/cgroup/sandbox-favordynmods/notify_on_release',
    ],
    [
      'set the favordynmods release agent',
      'echo /tmp/x > /sys/fs/cgroup/sandbox-favordynmods/release_agent',
    ],
    // Beside the group's file: the runner's link directory (ADR 33; runner-apart.test.ts).
    ['reach the rest of its CPU group', 'ls /run/sandbox/ | grep -v -x -e cpu.procs -e link'],
    ['remount its CPU group file', 'mount -o remount,rw /run/sandbox/cpu.procs'],
    ['write the root filesystem', 'touch /usr/bin/evil'],
    ['reach the Docker socket', 'test -e /var/run/docker.sock || test -e /run/docker.sock'],
    ['become root with su', 'su -c id root </dev/null'],
    ['change the clock', 'date -s "2000-01-01"'],
    ['set the hostname', 'hostname evil'],
  ])('cannot %s', async (_what, command) => {
    expect(await run(attempt(command))).toBe('refused\n');
  });

  // gVisor's processes are not the host's: no CPU group there (ADR 31).
  (onGvisor ? it.skip : it)(
    'stays in its CPU group, even after moving itself into it again',
    async () => {
      const group = "grep -E '^[0-9]+:(.*,)?cpu(,.*)?:' /proc/self/cgroup | cut -d: -f3";
      const before = await run(group);
      expect(before).toMatch(/^\/sandbox\//);
      const after = await run(
        `echo $$ > /run/sandbox/cpu.procs; echo 0 > /sys/fs/cgroup/cpu/tasks; ${group}`,
      );
      expect(after).toBe(before);
    },
  );
});

describe('escape attempts: secrets, processes, identity', () => {
  it('holds no control-plane secret in its environment', async () => {
    const environment = await run('env; tr "\\0" "\\n" < /proc/1/environ');
    for (const secret of [
      'TOKEN',
      'DATABASE_URL',
      'REDIS_URL',
      'ADMIN',
      'sk_live_',
      'postgres://',
    ]) {
      expect(environment).not.toContain(secret);
    }
  });

  it('sees only its own processes', async () => {
    const processes = await run('ps -e -o comm= | sort -u | tr "\\n" " "');
    for (const host of ['dockerd', 'containerd', 'postgres', 'redis-server', 'systemd', 'sshd']) {
      expect(processes).not.toContain(host);
    }
  });

  it('runs as uid 1000 and stays there', async () => {
    expect(
      await run(
        'id -u; find / -xdev -perm -4000 -type f 2>/dev/null | head -5 | while read f; do "$f" --help >/dev/null 2>&1; done; id -u',
      ),
    ).toBe('1000\n1000\n');
  });
});
