import { createServer, request, type Server } from 'node:http';
import {
  createServer as createTcpServer,
  type AddressInfo,
  type Server as TcpServer,
} from 'node:net';
import { endToEndHeaders, forwardResponse } from './preview-http';

describe('endToEndHeaders', () => {
  it('drops hop-by-hop headers and those the Connection header names', () => {
    expect(
      endToEndHeaders([
        'Content-Type',
        'text/plain',
        'Connection',
        'keep-alive, X-Secret-Hop',
        'Keep-Alive',
        'timeout=5',
        'Transfer-Encoding',
        'chunked',
        'X-Secret-Hop',
        '1',
        'Set-Cookie',
        'a=1',
      ]),
    ).toEqual(['Content-Type', 'text/plain', 'Set-Cookie', 'a=1']);
  });
});

describe('forwardResponse', () => {
  let upstream: TcpServer;
  let proxy: Server;
  let rawAnswer = '';

  beforeAll(async () => {
    // An upstream that answers whatever raw bytes the test sets, as a hostile app could.
    upstream = createTcpServer((socket) => {
      socket.once('data', () => socket.end(rawAnswer));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as AddressInfo).port;
    proxy = createServer((req, res) => {
      const out = request({ host: '127.0.0.1', port: upstreamPort, path: req.url }, (answer) =>
        forwardResponse(answer, res, () => res.writeHead(502).end('invalid upstream')),
      );
      out.on('error', () => res.writeHead(502).end('unreachable'));
      out.end();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => proxy.close(resolve));
    await new Promise((resolve) => upstream.close(resolve));
  });

  const get = () =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: (proxy.address() as AddressInfo).port, path: '/' },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  it.each([
    'HTTP/1.1 099 Odd\r\nContent-Length: 2\r\n\r\nhi',
    'HTTP/1.1 000 Zero\r\nContent-Length: 2\r\n\r\nhi',
    'HTTP/1.1 200 \x01bad reason\r\nContent-Length: 2\r\n\r\nhi',
  ])('answers for the app, without throwing, when it sends %j', async (answer) => {
    rawAnswer = answer;
    const response = await get();
    if (answer.includes('200')) {
      // A bad reason phrase is dropped, the rest passes.
      expect(response).toEqual({ status: 200, body: 'hi' });
    } else {
      expect(response).toEqual({ status: 502, body: 'invalid upstream' });
    }
  });

  it('passes an ordinary response through', async () => {
    rawAnswer = 'HTTP/1.1 201 Created\r\nX-App: 1\r\nContent-Length: 3\r\n\r\nnew';
    expect(await get()).toEqual({ status: 201, body: 'new' });
  });
});
