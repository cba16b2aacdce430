import { incompleteTail, OutputText, outputEventId, parseOutputEventId } from './output-text';

describe('OutputText', () => {
  it('hands out whole characters only, and counts the bytes they cover', () => {
    const smile = Buffer.from('😀'); // 4 bytes
    expect(incompleteTail(Buffer.concat([Buffer.from('a'), smile.subarray(0, 3)]))).toBe(3);
    expect(incompleteTail(Buffer.from('aé'))).toBe(0);
    expect(incompleteTail(Buffer.from('é').subarray(0, 1))).toBe(1);
    const text = new OutputText();
    expect(text.push('stdout', Buffer.concat([Buffer.from('hi '), smile.subarray(0, 2)]))).toBe(
      'hi ',
    );
    expect(text.at).toEqual({ stdout: 3, stderr: 0 });
    expect(text.push('stderr', Buffer.from('e'))).toBe('e');
    expect(text.push('stdout', smile.subarray(2))).toBe('😀');
    expect(text.at).toEqual({ stdout: 7, stderr: 1 });
  });

  it('flushes a cut character at the end, and jumps past a gap', () => {
    const text = new OutputText({ stdout: 10, stderr: 0 });
    expect(text.push('stdout', Buffer.from('é').subarray(0, 1))).toBe('');
    expect(text.flush('stdout')).toBe('\ufffd');
    expect(text.at).toEqual({ stdout: 11, stderr: 0 });
    text.jump({ stdout: 50, stderr: 4 });
    expect(text.at).toEqual({ stdout: 50, stderr: 4 });
  });
});

describe('output event ids', () => {
  it('round-trips, and refuses anything else', () => {
    const id = outputEventId('proc_0123456789abcdef', { stdout: 12, stderr: 3 }, 'exit');
    expect(id).toBe('proc_0123456789abcdef:12:3:exit');
    expect(parseOutputEventId(id)).toEqual({
      processId: 'proc_0123456789abcdef',
      at: { stdout: 12, stderr: 3 },
      mark: 'exit',
    });
    expect(parseOutputEventId('proc_0123456789abcdef:12:3:cell2').mark).toBe('cell2');
    const invalidRequest: Error = expect.objectContaining({ code: 'invalid_request' });
    for (const bad of [
      'proc_0123456789abcdef:1:2:cell0',
      'proc_0123456789abcdef:1:2:cell',
      '7',
      'proc_x:1:2',
      'proc_0123456789abcdef:-1:0',
      'proc_0123456789abcdef:1:2:go',
    ]) {
      expect(() => parseOutputEventId(bad)).toThrow(invalidRequest);
    }
  });
});
