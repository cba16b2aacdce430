import { userProcessesOf } from './kill-all';

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
      { pid: 300, ppid: 100, args: 'sleep infinity' },
      { pid: 301, ppid: 100, args: 'node server.js' },
    ];
    expect(userProcessesOf(processes, 100).map((p) => p.pid)).toEqual([202, 204, 205, 300, 301]);
  });
});
