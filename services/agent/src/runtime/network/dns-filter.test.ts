import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import * as packet from 'dns-packet';
import type { EgressPolicy } from '@sandbox/contract';
import { createLogger } from '@sandbox/logger';
import { DnsFilter, filterQuery, parseUpstreams, type DnsFilterPorts } from './dns-filter';

const logger = createLogger({ name: 'test', level: 'silent' });
const allowList: EgressPolicy = { default: 'deny', allow: ['*.allowed.test'], deny: [] };
const NXDOMAIN = 3;
const REFUSED = 5;

/**
 * An upstream resolver on loopback: every A question gets 192.0.2.7; `asked` lists names. Over
 * UDP, `big.allowed.test` comes back truncated (TC), and whole over TCP (192.0.2.8).
 */
async function upstream(): Promise<{
  port: number;
  asked: string[];
  socket: UdpSocket;
  tcp: Server;
}> {
  const asked: string[] = [];
  const answerTo = (message: Buffer, over: 'udp' | 'tcp') => {
    const query = packet.decode(message);
    const name = query.questions?.[0]?.name ?? '';
    asked.push(name);
    const truncated = over === 'udp' && name === 'big.allowed.test';
    return packet.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: packet.RECURSION_AVAILABLE | (truncated ? packet.TRUNCATED_RESPONSE : 0),
      questions: query.questions ?? [],
      answers: truncated
        ? []
        : [
            {
              type: 'A',
              class: 'IN',
              name,
              ttl: 5,
              data: over === 'tcp' ? '192.0.2.8' : '192.0.2.7',
            },
          ],
    });
  };
  const tcp = createServer((client) =>
    client.once('data', (data: Buffer) => client.end(framed(answerTo(data.subarray(2), 'tcp')))),
  );
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const port = (tcp.address() as AddressInfo).port;
  const socket = createSocket('udp4');
  socket.on('message', (message, remote) => {
    socket.send(answerTo(message, 'udp'), remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(port, '127.0.0.1', resolve));
  return { port, asked, socket, tcp };
}

const query = (name: string, id = 7) =>
  packet.encode({
    type: 'query',
    id,
    flags: packet.RECURSION_DESIRED,
    questions: [{ type: 'A', name }],
  });

function askUdp(port: number, name: string): Promise<packet.Packet> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => reject(new Error('no answer')), 3000);
    socket.on('message', (reply) => {
      clearTimeout(timer);
      socket.close();
      resolve(packet.decode(reply));
    });
    socket.send(query(name), port, '127.0.0.1');
  });
}

function askTcp(port: number, names: string[]): Promise<packet.Packet[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = Buffer.alloc(0);
    const replies: packet.Packet[] = [];
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      while (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        replies.push(packet.decode(received.subarray(2, 2 + received.readUInt16BE(0))));
        received = received.subarray(2 + received.readUInt16BE(0));
      }
      if (replies.length === names.length) {
        socket.destroy();
        resolve(replies);
      }
    });
    // Both queries in one write: the filter answers each, in turn.
    socket.write(Buffer.concat(names.map((name, i) => framed(query(name, i + 1)))));
  });
}

function framed(message: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length);
  return Buffer.concat([length, message]);
}

const rcodeOf = (reply: packet.Packet) => (reply.flags ?? 0) & 0x0f;

describe('DnsFilter', () => {
  let up: Awaited<ReturnType<typeof upstream>>;
  let filter: DnsFilter;
  let ports: DnsFilterPorts;
  let policy: EgressPolicy | undefined;

  beforeAll(async () => {
    up = await upstream();
    filter = new DnsFilter({
      policyFor: (ip) => (ip === '127.0.0.1' ? policy : undefined),
      upstreams: [{ host: '127.0.0.1', port: up.port }],
      logger,
    });
    ports = await filter.listen('127.0.0.1');
  });
  afterAll(() => {
    filter.close();
    // A runtime stopped twice closes it twice: the second does nothing.
    expect(() => filter.close()).not.toThrow();
    up.socket.close();
    up.tcp.close();
  });
  beforeEach(() => {
    up.asked.length = 0;
    policy = allowList;
  });

  it('relays the answer for a name the policy allows, and keeps every other name home', async () => {
    const allowed = await askUdp(ports.udp, 'api.allowed.test');
    expect(rcodeOf(allowed)).toBe(0);
    expect(allowed.answers?.[0]).toMatchObject({ type: 'A', data: '192.0.2.7' });
    const secret = await askUdp(ports.udp, 'c2VjcmV0.attacker.test');
    expect(rcodeOf(secret)).toBe(NXDOMAIN);
    expect(secret.answers ?? []).toEqual([]);
    expect(up.asked).toEqual(['api.allowed.test']);
  });

  it('applies a deny list to names', async () => {
    policy = { default: 'allow', allow: [], deny: ['*.attacker.test'] };
    expect(rcodeOf(await askUdp(ports.udp, 'x.attacker.test'))).toBe(NXDOMAIN);
    expect(rcodeOf(await askUdp(ports.udp, 'registry.example.org'))).toBe(0);
    expect(up.asked).toEqual(['registry.example.org']);
  });

  it('answers over TCP the same, query after query on one connection', async () => {
    const [allowed, secret] = await askTcp(ports.tcp, ['a.allowed.test', 'leak.attacker.test']);
    expect(allowed).toMatchObject({ id: 1, answers: [{ data: '192.0.2.7' }] });
    expect(secret && rcodeOf(secret)).toBe(NXDOMAIN);
    expect(up.asked).toEqual(['a.allowed.test']);
  });

  it('asks over TCP again for a TCP client whose answer came truncated', async () => {
    const viaUdp = await askUdp(ports.udp, 'big.allowed.test');
    expect((viaUdp.flags ?? 0) & packet.TRUNCATED_RESPONSE).toBe(packet.TRUNCATED_RESPONSE);
    const [viaTcp] = await askTcp(ports.tcp, ['big.allowed.test']);
    expect(viaTcp).toMatchObject({ answers: [{ data: '192.0.2.8' }] });
  });

  it('refuses a source it holds no policy for', async () => {
    policy = undefined;
    expect(rcodeOf(await askUdp(ports.udp, 'api.allowed.test'))).toBe(REFUSED);
    expect(up.asked).toEqual([]);
  });
});

describe('filterQuery', () => {
  it('refuses anything but one question', () => {
    const two = packet.decode(
      packet.encode({
        type: 'query',
        id: 1,
        questions: [
          { type: 'A', name: 'api.allowed.test' },
          { type: 'A', name: 'leak.attacker.test' },
        ],
      }),
    );
    expect((filterQuery(allowList, two)?.refusal.flags ?? 0) & 0x0f).toBe(REFUSED);
    expect(filterQuery(allowList, packet.decode(query('api.allowed.test')))).toBeUndefined();
  });

  it('reads upstreams as resolv.conf and SANDBOX_EGRESS_DNS write them', () => {
    expect(parseUpstreams(['10.0.0.2', '127.0.0.1:5353', 'dns.example'])).toEqual([
      { host: '10.0.0.2', port: 53 },
      { host: '127.0.0.1', port: 5353 },
    ]);
  });
});
