import { toExecEvent, toFileListing } from './agent-messages';

describe('agent messages', () => {
  it('turns exec events into the gateway union', () => {
    const data = Buffer.from('hi');
    expect(toExecEvent({ stdout: { data } })).toEqual({ kind: 'stdout', data });
    expect(toExecEvent({ stderr: { data } })).toEqual({ kind: 'stderr', data });
    expect(toExecEvent({ started: {} })).toEqual({ kind: 'started' });
    expect(toExecEvent({})).toBeUndefined();
    const result = {
      exitCode: 1,
      executionTimeMs: 2,
      memoryUsedBytes: 3,
      cpuTimeMs: 4,
      timedOut: false,
      filesWritten: ['a'],
      limitsExceeded: [{ limit: 'memory', max: 512 }],
    };
    expect(toExecEvent({ result })).toEqual({ kind: 'result', result });
  });

  it('gives every listed entry its type: the node lists files only', () => {
    const listing = toFileListing({
      files: [{ path: 'a.txt', size: 1, modified: '2026-01-01T00:00:00.000Z' }],
      total: 1,
      truncated: false,
    });
    expect(listing).toEqual({
      files: [{ path: 'a.txt', size: 1, modified: '2026-01-01T00:00:00.000Z', type: 'file' }],
      total: 1,
      truncated: false,
    });
  });
});
