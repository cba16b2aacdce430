import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { call } from './api';

const APP_SOURCE = readFileSync(join(__dirname, '..', 'fixtures', 'preview-app.js'), 'utf8');

/**
 * Starts test/fixtures/preview-app.js inside the session on each of `ports` (in the
 * background) and returns once they all accept connections.
 */
export async function startPreviewApp(
  url: string,
  key: string,
  sessionId: string,
  ports: number[] = [3000],
): Promise<void> {
  const start = ports
    .map((port) => `nohup node preview-app.js ${port} >/dev/null 2>&1 &`)
    .join(' ');
  const wait = ports
    .map(
      (port) =>
        `for i in $(seq 150); do (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && break; sleep 0.1; done;`,
    )
    .join(' ');
  const started = await call(`${url}/v1/execute`, {
    method: 'POST',
    key,
    body: {
      sessionId,
      files: [{ path: 'preview-app.js', content: APP_SOURCE }],
      command: `${start} ${wait}`,
    },
  });
  if (started.status !== 200) throw new Error(`preview app did not start: ${started.text}`);
}

/** A request to the edge proxy with a preview Host header (fetch cannot set Host). */
export function previewRequest(
  edgeUrl: string,
  host: string,
  path = '/',
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type: string | undefined }> {
  const edge = new URL(edgeUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: edge.hostname, port: edge.port, path, headers: { ...headers, host } },
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
