import { toExecEvent, toFileListing } from './agent-messages';

describe('agent messages', () => {
  it('turns exec events into the gateway union', () => {
    const data = Buffer.from('hi');
    const process = { id: 'proc_1', pid: 7 };
    const at = { stdout: 2, stderr: 0 };
    expect(toExecEvent({ stdout: { data, at, process } })).toEqual({
      kind: 'stdout',
      data,
      mark: { process, at },
    });
    expect(toExecEvent({ stderr: { data, at: null, process: null } })).toEqual({
      kind: 'stderr',
      data,
    });
    expect(toExecEvent({ started: { process: null } })).toEqual({ kind: 'started' });
    expect(toExecEvent({ started: { process } })).toEqual({ kind: 'started', process });
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
    expect(toExecEvent({ result: { ...result, process: null, cell: null } })).toEqual({
      kind: 'result',
      result,
    });
    expect(toExecEvent({ result: { ...result, process, cell: null } })).toEqual({
      kind: 'result',
      result,
      process,
    });
  });

  it('passes listed entries on with the type the node gave them', () => {
    const entry = { path: 'a.txt', size: 1, modified: '2026-01-01T00:00:00.000Z', type: 'file' };
    const listing = { files: [entry], total: 1, truncated: false };
    expect(toFileListing(listing)).toEqual(listing);
  });

  it('refuses an entry of a type the contract does not know', () => {
    const entry = { path: 'a', size: 1, modified: '2026-01-01T00:00:00.000Z', type: 'socket' };
    let thrown: unknown;
    try {
      toFileListing({ files: [entry], total: 1, truncated: false });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 'internal_error' });
  });
});
