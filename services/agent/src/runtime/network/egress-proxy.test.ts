import { connect as tcpConnect, createServer, type AddressInfo, type Server } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { EgressPolicy } from '@sandbox/contract';
import { createLogger } from '@sandbox/logger';
import { closedByNode } from './closed-by-node';
import { EgressProxy } from './egress-proxy';
import { natRules, needsProxy, restoreInput } from './egress-rules';
import { httpHost, tlsServerName } from './sni';

/** The first bytes a TLS client sends for `servername`, as Node's TLS sends them. */
async function clientHello(servername: string): Promise<Buffer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const first = new Promise<Buffer>((resolve) => {
    server.once('connection', (socket) => socket.once('data', (chunk: Buffer) => resolve(chunk)));
  });
  const client = tlsConnect({ host: '127.0.0.1', port, servername });
  client.on('error', () => undefined);
  const hello = await first;
  client.destroy();
  server.close();
  return hello;
}

describe('the name a connection asks for', () => {
  it('is the server name of a TLS ClientHello, once it is whole', async () => {
    const hello = await clientHello('API.Example.com');
    expect(tlsServerName(hello)).toEqual({ name: 'api.example.com' });
    expect(tlsServerName(hello.subarray(0, 40))).toBe('incomplete');
    expect(tlsServerName(Buffer.from('GET / HTTP/1.1\r\n'))).toBe('none');
  });

  it('is none for a ClientHello without one (an address)', async () => {
    // Node sends no server name for an IP address.
    expect(tlsServerName(await clientHello(''))).toBe('none');
  });

  it('is the Host of an HTTP/1 request head, without its port', () => {
    const head = (text: string) => httpHost(Buffer.from(text));
    expect(head('GET / HTTP/1.1\r\nHost: Example.com:8080\r\nAccept: */*\r\n\r\n')).toEqual({
      name: 'example.com',
    });
    expect(head('GET / HTTP/1.1\r\nHost: example.com\r\n')).toBe('incomplete');
    expect(head('GET / HTTP/1.1\r\nAccept: */*\r\n\r\n')).toBe('none');
    expect(head('GET / HTTP/1.1\r\nHost: a.com\r\nHost: b.com\r\n\r\n')).toBe('none');
    expect(head('\x16\x03\x01 junk\r\n\r\n')).toBe('none');
  });
});

describe('the nat rules of a proxied session', () => {
  const proxy = {
    gateway: '172.18.0.1',
    ports: { http: 41001, tls: 41002 },
    dns: { udp: 41003, tcp: 41004 },
  };

  it('take its DNS first, keep the destinations its CIDRs name, take the rest of its web traffic', () => {
    const policy: EgressPolicy = {
      default: 'deny',
      allow: ['203.0.113.0/24', 'example.com'],
      deny: ['198.51.100.7/32'],
    };
    expect(needsProxy(policy)).toBe(true);
    expect(natRules('SBXc', policy, proxy)).toEqual([
      // To any address, an allowed CIDR's included: only the node's filter answers its names.
      '-A SBXc -p udp --dport 53 -j DNAT --to-destination 172.18.0.1:41003',
      '-A SBXc -p tcp --dport 53 -j DNAT --to-destination 172.18.0.1:41004',
      '-A SBXc -d 203.0.113.0/24 -j RETURN',
      '-A SBXc -d 198.51.100.7/32 -j RETURN',
      '-A SBXc -p tcp --dport 80 -j DNAT --to-destination 172.18.0.1:41001',
      '-A SBXc -p tcp --dport 443 -j DNAT --to-destination 172.18.0.1:41002',
    ]);
  });

  it('are only for policies whose domain rules decide something', () => {
    expect(needsProxy({ default: 'allow', allow: ['example.com'], deny: [] })).toBe(false);
    expect(needsProxy({ default: 'deny', allow: ['203.0.113.0/24'], deny: [] })).toBe(false);
    expect(needsProxy({ default: 'allow', allow: [], deny: ['*.example.com'] })).toBe(true);
    const input = restoreInput(
      'node-1',
      new Map([
        [
          'ses_a',
          { ip: '172.18.0.5', policy: { default: 'deny', allow: ['example.com'], deny: [] } },
        ],
        ['ses_b', { ip: '172.18.0.6', policy: { default: 'deny', allow: [], deny: [] } }],
      ]),
      proxy,
    );
    const nat = input.slice(input.indexOf('*nat'));
    expect(nat).toContain('-s 172.18.0.5/32');
    expect(nat).not.toContain('-s 172.18.0.6/32');
    expect(input).toContain(
      '-d 172.18.0.1/32 -p tcp -m multiport --dports 41001,41002,41004 -j ACCEPT',
    );
    expect(input).toContain('-d 172.18.0.1/32 -p udp --dport 41003 -j ACCEPT');
    // No resolver is open in the filter table: a session's DNS is the filter's (nat), or none.
    const filter = input.slice(0, input.indexOf('*nat'));
    expect(filter).not.toContain('--dport 53');
  });
});

describe('closedByNode', () => {
  it('closes private ranges and the host, but what the operator allows', () => {
    const closed = closedByNode(['10.9.0.0/16'], () => ['192.0.2.1']);
    expect(closed('10.0.0.1')).toBe(true);
    expect(closed('169.254.169.254')).toBe(true);
    expect(closed('10.9.1.1')).toBe(false);
    expect(closed('192.0.2.1')).toBe(true);
    expect(closed('203.0.113.9')).toBe(false);
    expect(closed('not an address')).toBe(true);
  });
});

describe('EgressProxy', () => {
  let upstream: Server;
  let upstreamPort = 0;
  const heard: string[] = [];
  /** The names the proxy asked its resolver. */
  const resolved: string[] = [];
  const policies = new Map<string, EgressPolicy>();
  let proxy: EgressProxy | undefined;
  let ports = { http: 0, tls: 0 };

  beforeAll(async () => {
    // The "internet": one listener that records what reaches it.
    upstream = createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        heard.push(chunk.toString('latin1').split('\r\n')[0] ?? '');
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nreached');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as AddressInfo).port;
    proxy = new EgressProxy({
      policyFor: (ip) => policies.get(ip),
      resolve: (name) => {
        resolved.push(name);
        return Promise.resolve(
          name === 'gone.example' ? [] : name === 'private.example' ? ['10.0.0.1'] : ['127.0.0.1'],
        );
      },
      closedByNode: (ip) => ip !== '127.0.0.1',
      logger: createLogger({ name: 'test', level: 'silent' }),
      upstreamPorts: { http: upstreamPort, tls: upstreamPort },
    });
    ports = await proxy.listen('127.0.0.1');
  });

  afterAll(() => {
    proxy?.close();
    upstream.close();
  });

  /** An HTTP request through the proxy's http port, answered as text (or '' if cut). */
  async function through(host: string): Promise<string> {
    const socket = tcpConnect(ports.http, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.write(`GET /x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => socket.on('close', resolve));
    return answer;
  }

  it("forwards a name the source's policy allows, to what the node resolves, and refuses the rest", async () => {
    policies.set('127.0.0.1', {
      default: 'deny',
      allow: ['allowed.example', 'private.example', 'gone.example'],
      deny: [],
    });
    expect(await through('denied.example')).toContain('403 Forbidden');
    // A name the policy does not allow is never looked up: the lookup would carry it out.
    expect(resolved).toEqual([]);
    expect(await through('private.example')).toContain('403 Forbidden');
    expect(await through('gone.example')).toContain('403 Forbidden');
    expect(await through('127.0.0.1')).toContain('403 Forbidden');
    expect(heard).toEqual([]);
    expect(await through('allowed.example')).toContain('reached');
    expect(heard).toEqual(['GET /x HTTP/1.1']);
  });

  it('drops a connection from an address no policy is held for', async () => {
    policies.clear();
    expect(await through('allowed.example')).toBe('');
  });
});
