import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

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

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
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
  const tag = randomBytes(3).toString('hex');
  const ns = `sbxo-${tag}`;
  const hostSide = `oh${tag}`;
  const nsSide = `on${tag}`;
  let listener: ChildProcess | undefined;

  beforeAll(async () => {
    await ip('netns', 'add', ns);
    await ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
    await ip('link', 'set', nsSide, 'netns', ns);
    await ip('addr', 'add', '10.199.78.1/24', 'dev', hostSide);
    await ip('link', 'set', hostSide, 'up');
    await ip('netns', 'exec', ns, 'ip', 'addr', 'add', '10.199.78.2/24', 'dev', nsSide);
    for (const address of addresses) {
      await ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${address}/32`, 'dev', nsSide);
      await ip('route', 'add', `${address}/32`, 'via', '10.199.78.2');
    }
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', nsSide, 'up');
    await ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    await ip('netns', 'exec', ns, 'ip', 'route', 'add', 'default', 'via', '10.199.78.1');
    listener = spawn('ip', [
      'netns',
      'exec',
      ns,
      process.execPath,
      '-e',
      LISTENER(OUTSIDE_PORT, TRICKLE_PORT, await selfSigned()),
    ]);
    for (const address of addresses) {
      let answer = '';
      for (let i = 0; i < 50 && answer !== `reached ${address}`; i += 1) {
        answer = (
          await run('sh', ['-c', `curl -s --max-time 2 http://${address}:${OUTSIDE_PORT}/ || true`])
        ).stdout;
        if (answer !== `reached ${address}`)
          await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(answer).toBe(`reached ${address}`);
    }
  });

  afterAll(async () => {
    listener?.kill();
    for (const address of addresses) {
      await ip('route', 'del', `${address}/32`).catch(() => undefined);
    }
    await ip('link', 'del', hostSide).catch(() => undefined);
    await ip('netns', 'del', ns).catch(() => undefined);
  });
}
