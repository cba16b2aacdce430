import { spawn } from 'node:child_process';
import type { ContainerClient, HostProcess } from './container-client';
import { killAllInContainer, userProcessesOf } from './kill-all';

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

describe('userProcessesOf', () => {
  it('keeps init, the keep-alive, runners and their helpers; targets the rest', () => {
    const processes = [
      { pid: 100, ppid: 90, args: '/sbin/docker-init -- sleep infinity' },
      { pid: 101, ppid: 100, args: 'sleep infinity' },
      { pid: 200, ppid: 80, args: 'node /opt/sandbox/runner/main.js' },
      {
        pid: 201,
        ppid: 200,
        args: '/usr/local/lib/node_modules/tsx/node_modules/@esbuild/linux-x64/bin/esbuild --service=0.28.2 --ping',
      },
      { pid: 202, ppid: 200, args: '/usr/bin/time -f x bash -c sleep 100' },
      { pid: 203, ppid: 200, args: '/opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs' },
      { pid: 204, ppid: 203, args: '/bin/bash -c sleep 100' },
      // A run named like the spawner is not the runner's child: it is a user's.
      { pid: 205, ppid: 203, args: '/opt/sandbox/runner/run-spawner' },
      // The zygote waiting for its run is the spawner's child; one handed its run is renamed.
      {
        pid: 206,
        ppid: 203,
        args: '/usr/bin/node --enable-source-maps /opt/sandbox/runner/zygote.js',
      },
      { pid: 207, ppid: 203, args: 'node /workspace/.sandbox-code-1.mjs' },
      // A user's process named like a zygote, not the spawner's child.
      {
        pid: 208,
        ppid: 204,
        args: '/usr/bin/node --enable-source-maps /opt/sandbox/runner/zygote.js',
      },
      { pid: 300, ppid: 100, args: 'sleep infinity' },
      { pid: 301, ppid: 100, args: 'node server.js' },
    ];
    expect(userProcessesOf(processes, 100).map((p) => p.pid)).toEqual([
      202, 204, 205, 207, 208, 300, 301,
    ]);
  });

  it("keeps a runner's front (started by an exec), its Node and its spawner; not the runs", () => {
    const processes = [
      { pid: 100, ppid: 90, args: '/sbin/docker-init -- sleep infinity' },
      { pid: 101, ppid: 100, args: 'sleep infinity' },
      { pid: 400, ppid: 80, args: '/opt/sandbox/runner/front' },
      { pid: 401, ppid: 400, args: 'node --no-memory-reducer /opt/sandbox/runner/main.js' },
      { pid: 402, ppid: 400, args: '/opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs 1000' },
      { pid: 403, ppid: 401, args: '/opt/sandbox/runner/run-spawner /run/sandbox/cpu.procs 1000' },
      { pid: 404, ppid: 402, args: '/bin/bash -c sleep 100' },
      { pid: 405, ppid: 403, args: '/bin/bash -c sleep 200' },
      // A user's process named like the front: its parent is in the container.
      { pid: 406, ppid: 404, args: '/opt/sandbox/runner/front' },
      { pid: 407, ppid: 406, args: '/opt/sandbox/runner/run-spawner' },
      // A user's process named like a runner: neither a front's child nor an exec.
      { pid: 408, ppid: 404, args: 'node --no-memory-reducer /opt/sandbox/runner/main.js' },
      { pid: 409, ppid: 404, args: 'node /opt/sandbox/runner/main.js' },
    ];
    expect(userProcessesOf(processes, 100).map((p) => p.pid)).toEqual([
      404, 405, 406, 407, 408, 409,
    ]);
  });
});

describe('killAllInContainer', () => {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

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
