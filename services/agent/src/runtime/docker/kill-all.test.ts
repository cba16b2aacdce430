import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { ContainerClient, HostProcess } from './container-client';
import { ARMED_SHELL_ARGS, killAllInContainer, userProcessesOf, waitingShells } from './kill-all';

/** Containers whose every exec inside answers `reply`; `rounds()` counts the execs. */
function inside(reply: { code: number; stdout: string }) {
  let rounds = 0;
  const containers = {
    execute: () => {
      rounds += 1;
      return Promise.resolve(reply);
    },
  } as unknown as ContainerClient;
  return { containers, rounds: () => rounds };
}

/** Processes as `ps -o pid,ppid,args` lists them, one a line (`#` starts a comment). */
function listing(text: string): HostProcess[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [pid, ppid, ...args] = line.split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), args: args.join(' ') };
    });
}

/** Docker's init (pid 100 in the tests: the container's root) and the keep-alive it runs. */
const INIT_AND_KEEP_ALIVE = `
  100  90 /sbin/docker-init -- sleep infinity
  101 100 sleep infinity`;

describe('userProcessesOf', () => {
  it.each([
    {
      case: 'keeps init, the keep-alive, runners and their helpers; targets the rest',
      processes: `${INIT_AND_KEEP_ALIVE}
        199  80 /opt/sandbox/runner/front
        200 199 node --no-memory-reducer /opt/sandbox/runner/main.js
        201 200 /usr/local/lib/node_modules/tsx/node_modules/@esbuild/linux-x64/bin/esbuild --service=0.28.2 --ping
        202 204 /usr/bin/time -f x bash -c sleep 100
        203 200 /opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs
        204 203 /bin/bash -c sleep 100
        # A run named like the spawner is not the runner's child: it is a user's.
        205 203 /opt/sandbox/runner/run-spawner
        # The zygote waiting for its run is the spawner's child; one handed its run is renamed.
        206 203 /usr/bin/node --enable-source-maps /opt/sandbox/runner/zygote.js
        207 203 node /workspace/.sandbox-code-1.mjs
        # A user's process named like a zygote, not the spawner's child.
        208 204 /usr/bin/node --enable-source-maps /opt/sandbox/runner/zygote.js
        300 100 sleep infinity
        301 100 node server.js
      `,
      targets: [202, 204, 205, 207, 208, 300, 301],
    },
    {
      case: "keeps a runner's front (started by an exec), its Node and its spawner; not the runs",
      processes: `${INIT_AND_KEEP_ALIVE}
        400  80 /opt/sandbox/runner/front
        401 400 node --no-memory-reducer /opt/sandbox/runner/main.js
        402 400 /opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs 1000
        403 401 /opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs 1000
        404 402 /bin/bash -c sleep 100
        405 403 /bin/bash -c sleep 200
        # A user's process named like the front: its parent is in the container.
        406 404 /opt/sandbox/runner/front
        407 406 /opt/sandbox/runner/run-spawner
        # A user's process named like a runner: neither a front's child nor an exec.
        408 404 node --no-memory-reducer /opt/sandbox/runner/main.js
        409 404 node /opt/sandbox/runner/main.js
        # A Node named like the runner started by an exec, not by a front: never the runner.
        410  80 node --no-memory-reducer /opt/sandbox/runner/main.js
        411 410 /opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs 1000
      `,
      targets: [404, 405, 406, 407, 408, 409, 410, 411],
    },
  ])('$case', ({ processes, targets }) => {
    expect(userProcessesOf(listing(processes), 100).map((p) => p.pid)).toEqual(targets);
  });
});

describe('armed shells (ADR 48)', () => {
  it("keeps out a spawner's armed shell still waiting; targets one that took its run", () => {
    const processes = listing(`
      100  90 /sbin/docker-init -- sleep infinity
      400  80 /opt/sandbox/runner/front
      402 400 /opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs 1000
      410 402 ${ARMED_SHELL_ARGS} || exit 0; eval
      411 402 ${ARMED_SHELL_ARGS} || exit 0; eval
      # Looks waiting, but is a run's child: a user's.
      412 411 ${ARMED_SHELL_ARGS} || exit 0; eval
    `);
    expect(userProcessesOf(processes, 100, new Set([410, 412])).map((p) => p.pid)).toEqual([
      411, 412,
    ]);
  });

  it('finds the shells that still hold their command pipe as fd 3', async () => {
    const script = `${ARMED_SHELL_ARGS.slice('/bin/bash -c '.length)} || exit 0; sleep 30`;
    // Its fd 3 a pipe (Node's own 'pipe' stdio is a socket).
    const waiting = spawn('/bin/bash', ['-c', 'exec /bin/bash -c "$0" 3< <(sleep 30)', script], {
      stdio: 'ignore',
    });
    // Its fd 3 a file: its read takes two bytes, then it sleeps (a look-alike, not waiting).
    const without = spawn('/bin/bash', ['-c', 'exec /bin/bash -c "$0" 3</etc/passwd', script], {
      stdio: 'ignore',
    });
    try {
      // Until its exec gave it the pipe.
      const started = () =>
        [waiting, without].every((child) => existsSync(`/proc/${child.pid}/fd/3`));
      for (let i = 0; i < 200 && !started(); i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const args = `/bin/bash -c ${script}`;
      const found = await waitingShells([
        { pid: waiting.pid as number, ppid: 1, args },
        { pid: without.pid as number, ppid: 1, args },
        { pid: process.pid, ppid: 1, args: 'node' },
      ]);
      expect([...found]).toEqual([waiting.pid]);
    } finally {
      // An 'exit' already emitted is not emitted again: wait only for what still runs.
      const ended = (child: typeof waiting) =>
        child.exitCode !== null || child.signalCode !== null
          ? Promise.resolve()
          : once(child, 'exit');
      const exits = [ended(waiting), ended(without)];
      waiting.kill('SIGKILL');
      without.kill('SIGKILL');
      await Promise.all(exits);
    }
  });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('killAllInContainer in rounds from outside', () => {
  it('kills in rounds when the sandbox cannot be frozen (a fork bomb), until none is left', async () => {
    const children = [1, 2, 3].map(() => spawn('sleep', ['30']));
    const exited = children.map((child) => new Promise((resolve) => child.once('exit', resolve)));
    const pids = children.map((child) => child.pid!);
    let tops = 0;
    const containers = {
      pause: () => Promise.reject(new Error('OCI runtime pause failed: unable to freeze')),
      unpause: () => Promise.reject(new Error('not paused')),
      top: (): Promise<HostProcess[]> => {
        tops += 1;
        // One of them shows up only in the second round, as a fork that came late.
        const visible = tops === 1 ? pids.slice(0, 2) : pids;
        return Promise.resolve(
          visible.filter(alive).map((pid) => ({ pid, ppid: 999, args: 'sleep 30' })),
        );
      },
    } as unknown as ContainerClient;
    const killed = await killAllInContainer(containers, { id: 'ctr', pid: 1, ownKernel: false });
    await Promise.all(exited);
    expect(killed).toEqual([...pids].sort((a, b) => a - b));
    expect(pids.filter(alive)).toEqual([]);
    expect(tops).toBeGreaterThanOrEqual(3);
  });

  it('gives the freeze error when rounds of kills do not end it', async () => {
    // A bomb that outruns every round: each look finds a new process.
    const containers = {
      pause: () => Promise.reject(new Error('unable to freeze')),
      top: () => {
        const child = spawn('sleep', ['30']);
        return Promise.resolve([{ pid: child.pid!, ppid: 999, args: 'sleep 30' }]);
      },
    } as unknown as ContainerClient;
    await expect(
      killAllInContainer(containers, { id: 'ctr', pid: 1, ownKernel: false }),
    ).rejects.toThrow('unable to freeze');
  });
});

describe('killAllInContainer from inside the sandbox', () => {
  it('kills from inside, as the sandbox user, in rounds within one exec', async () => {
    const calls: Array<{ container: string; user: string; cmd: string[] }> = [];
    const containers = {
      pause: () => Promise.reject(new Error('must not freeze from the host')),
      top: () => Promise.reject(new Error('must not list host processes')),
      execute: (container: string, user: string, cmd: string[]) => {
        calls.push({ container, user, cmd });
        return Promise.resolve({ code: 0, stdout: '14\n9\n21\n' });
      },
    } as unknown as ContainerClient;
    await expect(
      killAllInContainer(containers, { id: 'ctr', pid: 1, ownKernel: true }),
    ).resolves.toEqual([9, 14, 21]);
    expect(calls).toHaveLength(1);
    // Root first (not held by the user's process limit), the user in full before the kill.
    expect(calls[0]).toMatchObject({ container: 'ctr', user: '0:1000' });
    expect(calls[0]?.cmd.slice(0, 6)).toEqual([
      'setpriv',
      '--reuid=1000',
      '--regid=1000',
      '--keep-groups',
      'sh',
      '-c',
    ]);
    expect(calls[0]?.cmd[6]).toContain('kill -KILL -1');
  });

  it('tries another exec when one could not start, was killed or left processes', async () => {
    const answers = [
      { code: 137, stdout: '14\n' },
      { code: 3, stdout: '21\n' },
      { code: 0, stdout: '9\n' },
    ];
    let calls = 0;
    const containers = {
      execute: () => Promise.resolve(answers[calls++]),
    } as unknown as ContainerClient;
    await expect(
      killAllInContainer(containers, { id: 'ctr', pid: 1, ownKernel: true }),
    ).resolves.toEqual([9, 14, 21]);
    expect(calls).toBe(3);
  });

  it('fails when the kill from inside fails or never ends', async () => {
    const failing = inside({ code: 2, stdout: '' });
    await expect(
      killAllInContainer(failing.containers, { id: 'ctr', pid: 1, ownKernel: true }),
    ).rejects.toThrow('kill-all in ctr ended with 2');
    expect(failing.rounds()).toBe(1);
    // An exec that cannot start (126) is tried again, up to the last.
    const busy = inside({ code: 126, stdout: '' });
    await expect(
      killAllInContainer(busy.containers, { id: 'ctr', pid: 1, ownKernel: true }),
    ).rejects.toThrow('kill-all in ctr ended with 126');
    expect(busy.rounds()).toBe(3);
    const endless = inside({ code: 3, stdout: '7\n' });
    await expect(
      killAllInContainer(endless.containers, { id: 'ctr', pid: 1, ownKernel: true }),
    ).rejects.toThrow('processes left after 15 rounds');
    expect(endless.rounds()).toBe(3);
  });
});
