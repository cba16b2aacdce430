import { META_BYTE, positionAfterRecords, recordOf, STREAM_BYTE, streamOf } from './log-records';

describe('log records', () => {
  it('names the stream of an output record by its kind byte', () => {
    expect(streamOf(STREAM_BYTE.stdout)).toBe('stdout');
    expect(streamOf(STREAM_BYTE.stderr)).toBe('stderr');
  });

  it('counts the output records of each stream past a start, not the meta ones', () => {
    const data = Buffer.concat([
      recordOf(STREAM_BYTE.stdout, Buffer.from('abc')),
      recordOf(META_BYTE, Buffer.from('{"id":"p"}')),
      recordOf(STREAM_BYTE.stderr, Buffer.from('de')),
      recordOf(STREAM_BYTE.stdout, Buffer.from('f')),
    ]);
    expect(positionAfterRecords(data, { stdout: 10, stderr: 1 })).toEqual({
      stdout: 14,
      stderr: 3,
    });
  });
});
