import { OutputBuffer } from './output-buffer';

describe('OutputBuffer', () => {
  it('joins multibyte characters split across chunks', () => {
    const buffer = new OutputBuffer(1024);
    const bytes = Buffer.from('héllo ✓');
    buffer.push(bytes.subarray(0, 2));
    buffer.push(bytes.subarray(2, 8));
    buffer.push(bytes.subarray(8));
    expect(buffer.text()).toBe('héllo ✓');
    expect(buffer.truncated).toBe(false);
  });

  it('keeps at most the cap and flags truncation', () => {
    const buffer = new OutputBuffer(5);
    buffer.push(Buffer.from('abc'));
    buffer.push(Buffer.from('defgh'));
    buffer.push(Buffer.from('ij'));
    expect(buffer.text()).toBe('abcde');
    expect(buffer.truncated).toBe(true);
  });
});
