import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AppError } from '@sandbox/errors';
import { createLogger } from '@sandbox/logger';
import { PREVIEW_HEADERS } from '@sandbox/contract';
import { createPreviewServer } from './preview-server';

const TOKEN = 'internal-secret';
const running = `ses_${'a'.repeat(24)}`;
const gone = `ses_${'b'.repeat(24)}`;

/** What a CONNECT got: its status and error header, and the tunnel when it opened. */
interface Opened {
  status: number;
  error: string | undefined;
  socket: Socket;
}

let app: Server;
let appPort: number;
let closedPort: number;
let preview: Server;
let previewPort: number;
const appConnections: Socket[] = [];

beforeAll(async () => {
  // The "app" in the session: answers with what it saw.
  app = createServer((req, res) => res.end(`app ${req.url} ${JSON.stringify(req.headers)}`));
  app.on('connection', (socket: Socket) => appConnections.push(socket));
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appPort = (app.address() as AddressInfo).port;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));

  preview = createPreviewServer({
    runtime: {
      previewHost: (sessionId) =>
        sessionId === running
          ? Promise.resolve('127.0.0.1')
          : Promise.reject(new AppError('session_not_found', 'Session sandbox not found')),
    },
    logger: createLogger({ name: 'test', level: 'silent' }),
    internalToken: TOKEN,
  });
  await new Promise<void>((resolve) => preview.listen(0, '127.0.0.1', resolve));
  previewPort = (preview.address() as AddressInfo).port;
});

afterAll(async () => {
  preview.closeAllConnections();
  app.closeAllConnections();
  await new Promise((resolve) => preview.close(resolve));
  await new Promise((resolve) => app.close(resolve));
});

const open = (target: string, headers: Record<string, string>): Promise<Opened> =>
  new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: previewPort,
      method: 'CONNECT',
      path: target,
      headers,
      agent: false,
    });
    req.once('connect', (res: IncomingMessage, socket: Socket) => {
      const error = res.headers[PREVIEW_HEADERS.error];
      resolve({ status: res.statusCode ?? 0, error: error as string | undefined, socket });
    });
    req.once('error', reject);
    req.end();
  });

/** Sends one raw HTTP request on an open tunnel and reads the whole answer. */
const exchange = (socket: Socket, raw: string): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('end', () => resolve(text));
    socket.write(raw);
  });

describe('the agent preview proxy: tunnels and refusals', () => {
  it('opens a tunnel to the named port of the named session, and passes bytes unchanged', async () => {
    const before = appConnections.length;
    const tunnel = await open(`${running}:${appPort}`, { [PREVIEW_HEADERS.token]: TOKEN });
    expect(tunnel.status).toBe(200);
    const answer = await exchange(
      tunnel.socket,
      'GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(answer).toContain('app /one');
    expect(answer).toContain('app /two');
    // Both requests on one connection to the app; the agent added no header of its own.
    expect(appConnections.length - before).toBe(1);
    expect(answer).not.toContain('x-sandbox');
  });

  it('refuses a tunnel without the internal token, and says so as the agent', async () => {
    const attempts: Record<string, string>[] = [{}, { [PREVIEW_HEADERS.token]: 'wrong' }];
    for (const headers of attempts) {
      const refused = await open(`${running}:${appPort}`, headers);
      expect(refused).toMatchObject({ status: 401, error: 'unauthorized' });
      refused.socket.destroy();
    }
  });

  it('refuses targets that are not a session port', async () => {
    for (const target of [`127.0.0.1:${appPort}`, `${running}:0`, `${running}`]) {
      const refused = await open(target, { [PREVIEW_HEADERS.token]: TOKEN });
      expect(refused).toMatchObject({ status: 400, error: 'invalid_request' });
      refused.socket.destroy();
    }
  });

  it('answers a missing session with 404 and a closed port with 502', async () => {
    const missing = await open(`${gone}:${appPort}`, { [PREVIEW_HEADERS.token]: TOKEN });
    expect(missing).toMatchObject({ status: 404, error: 'session_not_found' });
    missing.socket.destroy();
    const closed = await open(`${running}:${closedPort}`, { [PREVIEW_HEADERS.token]: TOKEN });
    expect(closed).toMatchObject({ status: 502, error: 'bad_gateway' });
    closed.socket.destroy();
  });
});

describe('the agent preview proxy: other requests, closed apps', () => {
  it('answers any other request with an error, never forwarding it', async () => {
    const before = appConnections.length;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: previewPort,
          path: '/',
          headers: { [PREVIEW_HEADERS.token]: TOKEN },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.once('error', reject);
      req.end();
    });
    expect(status).toBe(400);
    expect(appConnections.length).toBe(before);
  });

  it('closes the tunnel when the app closes its side', async () => {
    const tunnel = await open(`${running}:${appPort}`, { [PREVIEW_HEADERS.token]: TOKEN });
    const closed = new Promise((resolve) => tunnel.socket.once('close', resolve));
    app.closeAllConnections();
    await closed;
    expect(tunnel.socket.destroyed).toBe(true);
  });
});
