import { dockerFrame, DockerFrameParser, LineSplitter } from './docker-stream';

describe('DockerFrameParser', () => {
  it('routes frames split at any byte boundary', () => {
    const out: string[] = [];
    const err: string[] = [];
    const parser = new DockerFrameParser(
      (p) => out.push(p.toString()),
      (p) => err.push(p.toString()),
    );
    const bytes = Buffer.concat([
      dockerFrame(1, 'hello '),
      dockerFrame(2, 'oops'),
      dockerFrame(1, 'world'),
    ]);
    for (let i = 0; i < bytes.length; i += 3) parser.push(bytes.subarray(i, i + 3));
    expect(out.join('')).toBe('hello world');
    expect(err).toEqual(['oops']);
  });
});

describe('LineSplitter', () => {
  it('joins partial lines and multibyte characters across chunks', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((l) => lines.push(l));
    const bytes = Buffer.from('{"a":"é"}\n{"b":2}\n{"c"');
    splitter.push(bytes.subarray(0, 7));
    splitter.push(bytes.subarray(7));
    splitter.push(Buffer.from(':3}\n'));
    expect(lines).toEqual(['{"a":"é"}', '{"b":2}', '{"c":3}']);
  });

  it('drops a line that grows past its limit and reports it', () => {
    const lines: string[] = [];
    let overflows = 0;
    const splitter = new LineSplitter(
      (l) => lines.push(l),
      () => (overflows += 1),
      10,
    );
    splitter.push(Buffer.from('ok\n0123456789'));
    splitter.push(Buffer.from('abc'));
    expect(overflows).toBe(1);
    splitter.push(Buffer.from('\nnext\n'));
    expect(lines).toEqual(['ok', 'next']);
  });
});
