import { Writable } from 'node:stream';
import { createLogger, withRequestId } from './index';

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

describe('request ids', () => {
  it('writes the id of the request being served on every line its work logs', async () => {
    const { lines, stream } = capture();
    const logger = createLogger({ name: 't', destination: stream });
    logger.info('outside');
    await withRequestId('req-1', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.child({ part: 'x' }).info('inside, later');
    });
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed[0]).not.toHaveProperty('requestId');
    expect(parsed[1]).toMatchObject({ requestId: 'req-1', part: 'x', msg: 'inside, later' });
  });

  it('lets a line name its request itself, once', () => {
    const { lines, stream } = capture();
    const logger = createLogger({ name: 't', destination: stream });
    withRequestId('req-1', () => logger.info({ requestId: 'req-1' }, 'named'));
    expect(lines[0]?.match(/"requestId"/g)).toHaveLength(1);
  });
});
