import { request } from 'node:http';
import { call, createAccount, type TestAccount } from '../support/api';
import { startStack, type TestStack } from '../support/stack';

let stack: TestStack;
let account: TestAccount;
let sessionId: string;

/** A request to the edge proxy with a preview Host header (fetch cannot set Host). */
function preview(
  host: string,
  path = '/',
): Promise<{ status: number; body: string; type: string | undefined }> {
  const edge = new URL(stack.edge?.url ?? '');
  return new Promise((resolve, reject) => {
    const req = request(
      { host: edge.hostname, port: edge.port, path, headers: { host } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, type: res.headers['content-type'] }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const label = (id: string): string => id.replace('_', '-');

beforeAll(async () => {
  stack = await startStack({ edge: true });
  account = await createAccount(stack);
  const created = await call<{ sessionId: string }>(`${stack.url}/v1/sessions/create`, {
    method: 'POST',
    key: account.key,
    body: {},
  });
  sessionId = created.body.sessionId;
  const server = (port: number) =>
    `nohup node -e "require('http').createServer((q, s) => s.end('port ${port} ' + q.url)).listen(${port})" >/dev/null 2>&1 &`;
  const started = await call(`${stack.url}/v1/execute`, {
    method: 'POST',
    key: account.key,
    body: {
      sessionId,
      command: `${server(3000)} ${server(5173)} for port in 3000 5173; do for i in $(seq 150); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done; done`,
    },
  });
  expect(started.status).toBe(200);
});

afterAll(async () => {
  await stack?.stop();
});

describe('previews through the edge proxy', () => {
  it('serves port 3000 at ses-<id> and any port at <port>-ses-<id>', async () => {
    const main = await preview(`${label(sessionId)}.preview.test`, '/hello?x=1');
    expect(main).toMatchObject({ status: 200, body: 'port 3000 /hello?x=1' });
    const other = await preview(`5173-${label(sessionId)}.preview.test:8081`, '/');
    expect(other).toMatchObject({ status: 200, body: 'port 5173 /' });
  });

  it('answers a 502 page quickly for a port nothing listens on', async () => {
    const started = Date.now();
    const response = await preview(`4000-${label(sessionId)}.preview.test`);
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
    const other = await call<{ sessionId: string }>(`${stack.url}/v1/sessions/create`, {
      method: 'POST',
      key: account.key,
      body: {},
    });
    await call(`${stack.url}/v1/sessions/${other.body.sessionId}`, {
      method: 'DELETE',
      key: account.key,
    });
    expect((await preview(`${label(other.body.sessionId)}.preview.test`)).status).toBe(404);
  });
});
