import type { AddressInfo, Server } from 'node:net';

/** Starts `server` listening on an ephemeral port of `host`; resolves with the port. */
export async function listenOnEphemeralPort(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
