import { createServer, request, type Agent, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { closeTogether, PREVIEW_HEADERS } from '@sandbox/contract';
import { PreviewTunnels } from './preview-tunnels';

const one = `ses_${'a'.repeat(24)}`;
const other = `ses_${'b'.repeat(24)}`;

let app: Server;
let agent: Server;
let previewAddress: string;
/** The CONNECT targets the fake agent was asked for, with their internal token. */
const opened: { target: string; token: unknown }[] = [];
const appSockets = new Set<Socket>();
let tunnels: PreviewTunnels;

beforeAll(async () => {
  app = createServer((req, res) => res.end(`${req.url}`));
  app.on('connection', (socket: Socket) => appSockets.add(socket));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const appPort = (app.address() as AddressInfo).port;
  // A fake agent: opens tunnels to the app, except for sessions named `other`.
  agent = createServer();
  agent.on('connect', (req: IncomingMessage, socket: Duplex) => {
    opened.push({ target: req.url ?? '', token: req.headers[PREVIEW_HEADERS.token] });
    if (req.url?.startsWith(other) === true) {
      socket.end(
        `HTTP/1.1 404 Not Found\r\n${PREVIEW_HEADERS.error}: session_not_found\r\nContent-Length: 0\r\n\r\n`,
      );
      return;
    }
    const upstream = connect(appPort, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      socket.pipe(upstream).pipe(socket);
    });
    closeTogether(upstream, socket, ['close', 'error']);
  });
  await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
  previewAddress = `127.0.0.1:${(agent.address() as AddressInfo).port}`;
});

afterAll(async () => {
  agent.closeAllConnections();
  app.closeAllConnections();
  await new Promise((resolve) => agent.close(resolve));
  await new Promise((resolve) => app.close(resolve));
});

beforeEach(() => {
  opened.length = 0;
  tunnels = new PreviewTunnels('secret');
});

afterEach(() => tunnels.destroy());

const get = (pool: Agent, path: string) =>
  new Promise<string>((resolve, reject) => {
    const req = request({ host: 'ignored.invalid', path, agent: pool }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });

describe('preview tunnels per session port and upgrade', () => {
  it('carries the requests to a session port on one tunnel, opened with the internal token', async () => {
    const end = { previewAddress, sessionId: one, port: 3000 };
    for (const path of ['/a', '/b', '/c']) {
      expect(await get(tunnels.poolFor(end), path)).toBe(path);
    }
    expect(opened).toEqual([{ target: `${one}:3000`, token: 'secret' }]);
  });

  it('never lets two session ports share a tunnel', async () => {
    const first = { previewAddress, sessionId: one, port: 3000 };
    await get(tunnels.poolFor(first), '/');
    await get(tunnels.poolFor({ ...first, port: 5173 }), '/');
    await get(tunnels.poolFor(first), '/');
    expect(opened.map((o) => o.target)).toEqual([`${one}:3000`, `${one}:5173`]);
    expect(tunnels.poolFor(first)).not.toBe(tunnels.poolFor({ ...first, sessionId: other }));
  });

  it('gives each upgrade a tunnel of its own', async () => {
    const end = { previewAddress, sessionId: one, port: 3000 };
    await get(tunnels.single(end), '/');
    await get(tunnels.single(end), '/');
    expect(opened).toHaveLength(2);
  });
});

describe('preview tunnels refused and idle', () => {
  it('fails a request with the error of the agent when it refuses the tunnel', async () => {
    const end = { previewAddress, sessionId: other, port: 3000 };
    await expect(get(tunnels.poolFor(end), '/')).rejects.toMatchObject({
      code: 'session_not_found',
    });
    const unreachable = { ...end, previewAddress: '127.0.0.1:1' };
    await expect(get(tunnels.poolFor(unreachable), '/')).rejects.toMatchObject({
      code: 'bad_gateway',
    });
  });

  it('closes idle tunnels after a second', async () => {
    const end = { previewAddress, sessionId: one, port: 3000 };
    const before = appSockets.size;
    await get(tunnels.poolFor(end), '/');
    const socket = [...appSockets][before] as Socket;
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const started = Date.now();
    await closed;
    expect(Date.now() - started).toBeGreaterThan(800);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
