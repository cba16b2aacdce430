import { request, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createProxyServer } from './proxy-server';

/** A proxy server whose routes record what they were asked and answer from the test. */
function recordingServer(refuseWhen: (url: string) => boolean) {
  const seen: string[] = [];
  const upgrades: Duplex[] = [];
  const refusedUpgrades: unknown[] = [];
  const server = createProxyServer({
    target: (req) =>
      refuseWhen(req.url ?? '')
        ? Promise.reject(new Error('no route'))
        : Promise.resolve(`http://upstream${req.url ?? ''}`),
    web: (_req, res, target) => {
      seen.push(target);
      res.end(`to ${target}`);
    },
    ws: (_req, socket) => {
      upgrades.push(socket);
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
      );
    },
    refuse: (res, err) => res.writeHead(404).end(String((err as Error).message)),
    refuseUpgrade: (err) => refusedUpgrades.push(err),
  });
  return { server, seen, upgrades, refusedUpgrades };
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

/** Opens a raw WebSocket upgrade; resolves with the socket once the server answered or closed. */
function upgrade(port: number, path: string): Promise<{ socket: Socket; answer: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
      ),
    );
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      resolve({ socket, answer });
    });
    socket.on('close', () => resolve({ socket, answer }));
    socket.on('error', () => undefined);
  });
}

describe('createProxyServer', () => {
  it('sends requests to their target and answers refused ones itself', async () => {
    const { server, seen } = recordingServer((url) => url.startsWith('/nope'));
    const port = await listen(server);
    try {
      expect(await get(port, '/app')).toEqual({ status: 200, body: 'to http://upstream/app' });
      expect(await get(port, '/nope')).toEqual({ status: 404, body: 'no route' });
      expect(seen).toEqual(['http://upstream/app']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('closes refused upgrades, and ends accepted ones on closeAllConnections', async () => {
    const { server, upgrades, refusedUpgrades } = recordingServer((url) => url === '/nope');
    const port = await listen(server);
    const refused = await upgrade(port, '/nope');
    expect(refused.answer).toBe('');
    expect(refusedUpgrades).toHaveLength(1);

    const accepted = await upgrade(port, '/ws');
    expect(accepted.answer).toContain('101');
    expect(upgrades).toHaveLength(1);
    const closed = new Promise((resolve) => accepted.socket.on('close', resolve));
    server.close();
    server.closeAllConnections();
    await closed;
    expect(upgrades[0]?.destroyed).toBe(true);
  });
});
