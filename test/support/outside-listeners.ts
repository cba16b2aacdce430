import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { shell, useListenerNamespace } from './netns';

/**
 * Addresses "on the internet" for a sandbox, each a real listener on this machine: a network
 * namespace behind a veth pair holds them (documentation ranges, which no packet of a test
 * leaves the machine for), reached through a host route. Each answers HTTP on OUTSIDE_PORT
 * and on 80, and HTTPS on 443 (a self-signed certificate), with `reached <address>`, and on
 * TRICKLE_PORT with a byte every 100 ms, for as long as the connection lasts.
 */
export const OUTSIDE_PORT = 18081;
export const TRICKLE_PORT = 18082;

const run = promisify(execFile);

/** A throwaway key and certificate for the listeners' HTTPS. */
async function selfSigned(): Promise<{ key: string; cert: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'outside-tls-'));
  try {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=outside.test',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    return {
      key: await readFile(join(dir, 'key.pem'), 'utf8'),
      cert: await readFile(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const LISTENER = (port: number, trickle: number, tls: { key: string; cert: string }) => `
const http = require('http');
const https = require('https');
const reached = (q, s) => s.end('reached ' + q.socket.localAddress);
http.createServer(reached).listen(${port}, '0.0.0.0');
http.createServer(reached).listen(80, '0.0.0.0');
https.createServer(${JSON.stringify(tls)}, reached).listen(443, '0.0.0.0');
http.createServer((q, s) => {
  s.writeHead(200);
  const timer = setInterval(() => s.write('.'), 100);
  s.on('close', () => clearInterval(timer));
}).listen(${trickle}, '0.0.0.0');
`;

/** Registers `beforeAll`/`afterAll` that make `addresses` answer, then take them down. */
export function useOutsideListeners(addresses: readonly string[]): void {
  useListenerNamespace({
    subnet: '10.199.78',
    addresses,
    script: async () => LISTENER(OUTSIDE_PORT, TRICKLE_PORT, await selfSigned()),
    isUp: async (address) =>
      (await shell(`curl -s --max-time 2 http://${address}:${OUTSIDE_PORT}/ || true`)) ===
      `reached ${address}`,
  });
}
