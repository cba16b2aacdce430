import { FrameSplitter, frameMark } from './frames';

const TOKEN = 'deadbeef';
const mark = frameMark(TOKEN);

function splitAll(chunks: string[]): { output: string; frames: string[] } {
  const splitter = new FrameSplitter(TOKEN);
  let output = '';
  const frames: string[] = [];
  for (const chunk of chunks) {
    const part = splitter.push(Buffer.from(chunk));
    output += Buffer.concat(part.output).toString();
    frames.push(...part.frames);
  }
  return { output, frames };
}

describe('FrameSplitter', () => {
  it('separates output from answers', () => {
    expect(splitAll([`hello\n${mark}{"ev":"done"}\nafter`])).toEqual({
      output: 'hello\nafter',
      frames: ['{"ev":"done"}'],
    });
  });

  it('finds an answer after output with no newline', () => {
    expect(splitAll([`partial${mark}end\n`])).toEqual({ output: 'partial', frames: ['end'] });
  });

  it('joins a mark and an answer split across chunks, byte by byte', () => {
    const whole = `a${mark}{"x":1}\nb`;
    expect(splitAll([...whole])).toEqual({ output: 'ab', frames: ['{"x":1}'] });
  });

  it('passes on a lookalike without the token', () => {
    expect(splitAll(['\x1eother\n'])).toEqual({ output: '\x1eother\n', frames: [] });
  });
});
