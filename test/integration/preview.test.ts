import { randomBytes } from 'node:crypto';
import { Agent, request, type ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { previewRequest, startPreviewApp } from '../support/preview-app';
import { useStackWithAccount } from '../support/use-stack';

const t = useStackWithAccount('free', { stack: { edge: true }, session: true });

const preview = (host: string, path = '/', headers: Record<string, string> = {}) =>
  previewRequest(t.stack.edge?.url ?? '', host, path, headers);

/** A WebSocket upgrade request to the edge proxy for `host` (not yet sent). */
function upgradeRequest(host: string): ClientRequest {
  const edge = new URL(t.stack.edge?.url ?? '');
  return request({
    host: edge.hostname,
    port: edge.port,
    path: '/socket',
    headers: {
      host,
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': randomBytes(16).toString('base64'),
    },
  });
}

/** What an upgrade to `host` got: 'upgraded', 'status <code>' or 'closed'. */
function upgradeOutcome(host: string): Promise<string> {
  return new Promise((resolve) => {
    const req = upgradeRequest(host);
    req.on('upgrade', (_res, socket: Socket) => {
      socket.destroy();
      resolve('upgraded');
    });
    req.on('response', (res) => {
      res.resume();
      resolve(`status ${res.statusCode}`);
    });
    req.on('error', () => resolve('closed'));
    req.end();
  });
}

const label = (id: string): string => id.replace('_', '-');

beforeAll(async () => {
  const server = (port: number) =>
    `nohup node -e "require('http').createServer((q, s) => s.end('port ${port} ' + q.url)).listen(${port})" >/dev/null 2>&1 &`;
  const started = await t.api.execute(t.sessionId, {
    command: `${server(3000)} ${server(5173)} for port in 3000 5173; do for i in $(seq 150); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done; done`,
  });
  expect(started.status).toBe(200);
});

describe('previews through the edge proxy', () => {
  it('serves port 3000 at ses-<id> and any port at <port>-ses-<id>', async () => {
    const main = await preview(`${label(t.sessionId)}.preview.test`, '/hello?x=1');
    expect(main).toMatchObject({ status: 200, body: 'port 3000 /hello?x=1' });
    const other = await preview(`5173-${label(t.sessionId)}.preview.test:8081`, '/');
    expect(other).toMatchObject({ status: 200, body: 'port 5173 /' });
  });

  it('answers a 502 page quickly for a port nothing listens on', async () => {
    const started = Date.now();
    const response = await preview(`4000-${label(t.sessionId)}.preview.test`);
    expect(response.status).toBe(502);
    expect(response.type).toMatch(/^text\/html/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('answers a 404 page for unknown sessions and foreign hosts', async () => {
    const unknown = await preview(`ses-${'0'.repeat(24)}.preview.test`);
    expect(unknown.status).toBe(404);
    expect(unknown.type).toMatch(/^text\/html/);
    const foreign = await preview('example.com');
    expect(foreign.status).toBe(404);
  });

  it('stops serving a deleted session', async () => {
    const other = await t.api.createSession();
    await t.api.deleteSession(other);
    expect((await preview(`${label(other)}.preview.test`)).status).toBe(404);
  });
});

describe('private previews', () => {
  it('need the X-Preview-Token given at creation, which the app never sees', async () => {
    const created = await t.api.post<{ sessionId: string; previewToken: string }>(
      '/v1/sessions/create',
      { preview: { private: true } },
    );
    expect(created.status).toBe(200);
    const { sessionId: id, previewToken } = created.body;
    expect(previewToken).toMatch(/^pvt_[A-Za-z0-9_-]{32}$/);
    await startPreviewApp(t.stack.url, t.account.key, id);
    const host = `${label(id)}.preview.test`;
    const lastActive = async () =>
      (await t.api.session<{ lastActive: string }>(id)).body.lastActive;

    // The app's start is activity, which the gateway writes within a second or so: let it
    // land first.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = await lastActive();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const missing = await preview(host, '/api');
    expect(missing.status).toBe(403);
    expect(missing.type).toMatch(/^text\/html/);
    expect(missing.body).toContain('X-Preview-Token');
    const wrong = await preview(host, '/api', { 'x-preview-token': `pvt_${'A'.repeat(32)}` });
    expect(wrong.status).toBe(403);
    // Refused visits neither wake the session nor count as its activity.
    expect(await lastActive()).toBe(before);

    // What a visitor sends under the internal header names never reaches the app either.
    const allowed = await preview(host, '/headers', {
      'x-preview-token': previewToken,
      'x-sandbox-internal-token': 'forged',
      'x-sandbox-preview-error': 'forged',
    });
    expect(allowed.status).toBe(200);
    const seen = JSON.parse(allowed.body) as Record<string, string>;
    expect(seen.host).toBe(host);
    expect(Object.keys(seen).filter((name) => /preview|sandbox/i.test(name))).toEqual([]);
    expect(await lastActive()).not.toBe(before);

    // Sessions without the option stay public and never show a token.
    const open = await t.api.post('/v1/sessions/create', { preview: { private: false } });
    expect(open.body).not.toHaveProperty('previewToken');
    const bad = await t.api.post('/v1/sessions/create', { preview: { private: 'yes' } });
    expect(bad.status).toBe(400);
  });
});

let previewApp: Promise<{ appSession: string; host: string }> | undefined;
/**
 * A session running the preview app (`appSession`, its preview `host`), started before the
 * first case that needs it; the describes that use it share it.
 */
function usePreviewApp(): { appSession: string; host: string } {
  const shared = { appSession: '', host: '' };
  beforeAll(async () => {
    previewApp ??= (async () => {
      const appSession = await t.api.createSession();
      await startPreviewApp(t.stack.url, t.account.key, appSession);
      return { appSession, host: `${label(appSession)}.preview.test` };
    })();
    Object.assign(shared, await previewApp);
  });
  return shared;
}

describe('streaming through the edge proxy', () => {
  const shared = usePreviewApp();

  it('streams Server-Sent Events as the app sends them', async () => {
    const edge = new URL(t.stack.edge?.url ?? '');
    const arrivals: { at: number; text: string }[] = [];
    const started = Date.now();
    await new Promise<void>((resolve, reject) => {
      const req = request(
        { host: edge.hostname, port: edge.port, path: '/events', headers: { host: shared.host } },
        (res) => {
          expect(res.headers['content-type']).toBe('text/event-stream');
          res.setEncoding('utf8');
          res.on('data', (chunk: string) =>
            arrivals.push({ at: Date.now() - started, text: chunk }),
          );
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end();
    });
    const text = arrivals.map((a) => a.text).join('');
    expect(text).toBe([1, 2, 3, 4, 5].map((n) => `data: event ${n}\n\n`).join(''));
    // Not buffered to the end: the first event arrived well before the last (300 ms apart).
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    expect(arrivals[arrivals.length - 1]!.at - arrivals[0]!.at).toBeGreaterThan(800);
  });

  it('keeps client connections alive across requests', async () => {
    const edge = new URL(t.stack.edge?.url ?? '');
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets: Socket[] = [];
    for (let i = 0; i < 3; i += 1) {
      await new Promise<void>((resolve, reject) => {
        const req = request(
          {
            host: edge.hostname,
            port: edge.port,
            path: '/api',
            headers: { host: shared.host },
            agent,
          },
          (res) => {
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('socket', (socket: Socket) => sockets.push(socket));
        req.on('error', reject);
        req.end();
      });
    }
    agent.destroy();
    expect(new Set(sockets).size).toBe(1);
  });

  it('reaches the app on one kept-alive connection, whichever visitor asks', async () => {
    // The edge keeps its tunnels to a session's port (the agent opens each once and then only
    // passes bytes), so the app sees one connection, not one per request.
    const seen = new Set<string>();
    for (let i = 0; i < 3; i += 1) {
      const answer = await preview(shared.host, '/connection');
      expect(answer.status).toBe(200);
      seen.add(answer.body);
    }
    expect(seen.size).toBe(1);
  });
});

describe('upgrades and malformed answers through the edge proxy', () => {
  const shared = usePreviewApp();

  it('carries WebSocket upgrades both ways', async () => {
    const socket = await new Promise<Socket>((resolve, reject) => {
      const req = upgradeRequest(shared.host);
      req.on('upgrade', (_res, upgraded: Socket) => resolve(upgraded));
      req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    const reply = new Promise<string>((resolve) => {
      socket.once('data', (frame: Buffer) =>
        resolve(frame.subarray(2, 2 + (frame[1]! & 0x7f)).toString()),
      );
    });
    const payload = Buffer.from('hello through the edge');
    const mask = randomBytes(4);
    socket.write(
      Buffer.concat([
        Buffer.from([0x81, 0x80 | payload.length]),
        mask,
        Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!)),
      ]),
    );
    expect(await reply).toBe('echo: hello through the edge');
    socket.destroy();
  });

  it('answers a 502 page for a malformed response, and keeps serving', async () => {
    // A hostile app: a status line Node would refuse to send on (it would throw).
    const hostile = await t.api.execute(shared.appSession, {
      command:
        "nohup node -e \"require('net').createServer((s) => { s.on('error', () => {}); s.once('data', () => s.end('HTTP/1.1 099 x\\r\\nContent-Length: 0\\r\\n\\r\\n')); }).listen(3002)\" >/dev/null 2>&1 & " +
        'for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3002) 2>/dev/null && break; sleep 0.1; done',
    });
    expect(hostile.status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const bad = await preview(`3002-${shared.host}`, '/');
      expect(bad.status).toBe(502);
      expect(bad.type).toMatch(/^text\/html/);
    }
    expect(await preview(shared.host, '/api')).toMatchObject({
      status: 200,
      body: 'api ok on port 3000',
    });
  });
});

describe('upgrades kept to their own visitor and session', () => {
  const shared = usePreviewApp();

  it('never lets an app answer an upgrade with bytes meant for other visitors', async () => {
    // A hostile app: refuses the upgrade with a chunked answer whose content is a forged end
    // of response, then keeps writing forged responses on the connection.
    const forged = 'HTTP/1.1 200 OK\\r\\nContent-Length: 6\\r\\n\\r\\nforged';
    const app = [
      "const net = require('net');",
      'net.createServer((s) => {',
      "  s.on('error', () => {});",
      "  s.once('data', () => {",
      "    s.write('HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n5\\r\\n0\\r\\n\\r\\n\\r\\n');",
      `    const t = setInterval(() => s.write((${forged.length}).toString(16) + '\\r\\n${forged}\\r\\n'), 20);`,
      "    s.on('close', () => clearInterval(t));",
      '  });',
      '}).listen(3003);',
    ].join('\n');
    const started = await t.api.execute(shared.appSession, {
      files: [{ path: 'forger.js', content: app }],
      command:
        'nohup node forger.js >/dev/null 2>&1 & for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3003) 2>/dev/null && break; sleep 0.1; done',
    });
    expect(started.status).toBe(200);
    const outcome = await upgradeOutcome(`3003-${shared.host}`);
    expect(outcome).not.toBe('upgraded');
    expect(outcome).not.toBe('status 200');
    // Every other request through the edge still gets its own answer.
    for (let i = 0; i < 5; i += 1) {
      expect(await preview(shared.host, '/api')).toMatchObject({
        status: 200,
        body: 'api ok on port 3000',
      });
    }
  });

  it('refuses WebSocket upgrades of unknown sessions', async () => {
    const outcome = await upgradeOutcome(`ses-${'0'.repeat(24)}.preview.test`);
    expect(outcome).not.toBe('upgraded');
  });
});
