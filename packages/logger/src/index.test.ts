import { Writable } from 'node:stream';
import { createLogger } from './index';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, stream };
}

describe('createLogger', () => {
  it('redacts secrets wherever they appear', () => {
    const { lines, stream } = capture();
    const logger = createLogger({ name: 't', destination: stream });
    logger.info(
      { req: { headers: { authorization: 'Bearer sk_live_secret' } }, exec: { env: { A: 'x' } } },
      'hello',
    );
    const out = lines.join('');
    expect(out).toContain('hello');
    expect(out).not.toContain('sk_live_secret');
    expect(out).not.toContain('"A":"x"');
  });
});
