import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RouteResolver } from './route-resolver';

let server: Server;
let url: string;
const lookups: { path: string; token: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const token = req.headers['x-preview-token'];
    lookups.push({ path: req.url ?? '', token: typeof token === 'string' ? token : undefined });
    if (req.url?.endsWith('missing')) {
      res.writeHead(404).end();
      return;
    }
    if (req.url?.endsWith('garbled')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ sessionId: 's', previewAddress: 7 }));
      return;
    }
    if (req.url?.endsWith('private') && token !== 'right') {
      res.writeHead(403).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        sessionId: `ses_${'a'.repeat(24)}`,
        nodeId: 'n',
        previewAddress: '10.0.0.1:1',
        private: req.url?.endsWith('private') === true,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  lookups.length = 0;
});

describe('RouteResolver caches', () => {
  it('reuses a public route for its cache time, whatever token visitors send', async () => {
    const resolver = new RouteResolver(url, undefined, 1000, 200);
    await resolver.resolve('open', undefined);
    await resolver.resolve('open', undefined);
    await resolver.resolve('open', 'some-token');
    await Promise.all([1, 2, 3].map((n) => resolver.resolve('open', `token-${n}`)));
    expect(lookups).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await resolver.resolve('open', undefined);
    expect(lookups).toHaveLength(2);
  });

  it('keeps a private route per token, shares concurrent lookups, refuses huge tokens', async () => {
    const resolver = new RouteResolver(url, undefined, 1000, 60_000);
    await Promise.all([1, 2, 3].map(() => resolver.resolve('private', 'right')));
    expect(lookups).toHaveLength(1);
    await expect(resolver.resolve('private', undefined)).rejects.toMatchObject({
      code: 'forbidden',
    });
    await expect(resolver.resolve('private', 'x'.repeat(300))).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(lookups).toHaveLength(2);
  });

  it('never caches a refusal', async () => {
    const resolver = new RouteResolver(url, undefined, 1000, 60_000);
    await expect(resolver.resolve('private', 'wrong')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(resolver.resolve('private', 'wrong')).rejects.toMatchObject({ code: 'forbidden' });
    await expect(resolver.resolve('missing', undefined)).rejects.toMatchObject({
      code: 'session_not_found',
    });
    await expect(resolver.resolve('private', 'right')).resolves.toMatchObject({ nodeId: 'n' });
    expect(lookups.map((l) => l.token)).toEqual(['wrong', 'wrong', undefined, 'right']);
  });

  it('asks every time when the cache is off', async () => {
    const resolver = new RouteResolver(url, undefined, 1000, 0);
    await resolver.resolve('open', undefined);
    await resolver.resolve('open', undefined);
    expect(lookups).toHaveLength(2);
  });
});

describe('RouteResolver refuses routes off the contract', () => {
  it('refuses a route that does not match the contract (fails closed)', async () => {
    const resolver = new RouteResolver(url, undefined, 1000, 60_000);
    await expect(resolver.resolve('garbled', undefined)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
  });
});
