import { createServer, type Server } from 'node:net';
import { listenOnEphemeralPort } from './listen';

describe('listenOnEphemeralPort', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });

  it('listens on a port of its own on the host, and says which', async () => {
    const server = createServer();
    servers.push(server);
    const port = await listenOnEphemeralPort(server, '127.0.0.1');
    expect(port).toBeGreaterThan(0);
    expect(server.address()).toMatchObject({ address: '127.0.0.1', port });
  });

  it('rejects when the host has no such address', async () => {
    const server = createServer();
    servers.push(server);
    await expect(listenOnEphemeralPort(server, '192.0.2.1')).rejects.toMatchObject({
      code: 'EADDRNOTAVAIL',
    });
    expect(server.listenerCount('error')).toBe(0);
  });
});
