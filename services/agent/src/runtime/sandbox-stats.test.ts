import { parseSandboxStats } from './sandbox-stats';

describe('parseSandboxStats', () => {
  it('counts files and user processes, not init, keep-alive or itself', () => {
    const output = [
      'files 3',
      'self 40',
      '    1     0     1 /sbin/docker-init -- sleep infinity',
      '    7     1     1 sleep infinity',
      '   20     0    20 node server.js',
      '   21    20    20 sleep 100',
      '   40     0    40 sh -c echo',
      '   45    40    40 ps -e -o pid=,ppid=,sid=,args=',
      '',
    ].join('\n');
    expect(parseSandboxStats(output)).toEqual({ filesCount: 3, activeProcesses: 2 });
  });

  it('gives zeros for empty output', () => {
    expect(parseSandboxStats('')).toEqual({ filesCount: 0, activeProcesses: 0 });
  });
});
