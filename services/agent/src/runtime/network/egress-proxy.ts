import { promises as dns } from 'node:dns';
import { connect, createServer, isIPv4, type Server, type Socket } from 'node:net';
import { egressDecision, ipv4, nameDecision, type EgressPolicy } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import { listenOnEphemeralPort } from './listen';
import { httpHost, MAX_FIRST_BYTES, tlsServerName, type FirstBytes } from './sni';

/** How long a sandbox has to send the name it asks for. */
const FIRST_BYTES_MS = 10_000;
/** How long a name may take to resolve, and a connection to open. */
const RESOLVE_MS = 5_000;
const CONNECT_MS = 10_000;

export interface EgressProxyDeps {
  /** The policy of the sandbox at this address (undefined: none held there). */
  policyFor(ip: string): EgressPolicy | undefined;
  /** The IPv4 addresses of a name, as this node resolves it. */
  resolve(name: string): Promise<string[]>;
  /** Whether the node itself keeps an address closed to sandboxes (ADR 9). */
  closedByNode(ip: string): boolean;
  logger: Logger;
  /** The ports connections go to (80 and 443; tests give their listeners'). */
  upstreamPorts?: { http: number; tls: number };
}

/** The ports the proxy listens on: where the web traffic of domain-ruled sandboxes goes. */
export interface ProxyPorts {
  http: number;
  tls: number;
}

type Kind = 'http' | 'tls';
const WEB_PORTS: Record<Kind, number> = { http: 80, tls: 443 };

/**
 * The node's egress proxy for domain rules (ADR 30): the web traffic (ports 80 and 443) of a
 * sandbox whose policy names domains is redirected here by the node's firewall. The proxy
 * reads the name the connection asks for (TLS server name, HTTP Host), decides by the
 * session's policy, resolves the name itself and connects to what it resolved: a sandbox that
 * resolves a name otherwise, connects by address or names another server than it reaches
 * cannot get around a rule. A connection without a name is refused. What the name resolves to
 * must also pass the policy's address rules and the node's own closed ranges.
 */
export class EgressProxy {
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();

  constructor(private readonly deps: EgressProxyDeps) {}

  async listen(host: string): Promise<ProxyPorts> {
    const http = await this.listenFor('http', host);
    const tls = await this.listenFor('tls', host);
    return { http, tls };
  }

  close(): void {
    for (const server of this.servers) server.close();
    for (const socket of this.sockets) socket.destroy();
  }

  private async listenFor(kind: Kind, host: string): Promise<number> {
    const server = createServer((socket) => this.accept(kind, socket));
    this.servers.push(server);
    return listenOnEphemeralPort(server, host);
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  private accept(kind: Kind, client: Socket): void {
    this.track(client);
    const source = (client.remoteAddress ?? '').replace(/^::ffff:/, '');
    const policy = this.deps.policyFor(source);
    if (policy === undefined) {
      client.destroy();
      return;
    }
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => client.destroy(), FIRST_BYTES_MS);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const found: FirstBytes = kind === 'tls' ? tlsServerName(received) : httpHost(received);
      if (found === 'incomplete' && received.length < MAX_FIRST_BYTES) return;
      clearTimeout(timer);
      client.off('data', onData);
      client.pause();
      const name = typeof found === 'object' ? found.name : undefined;
      void this.forward(kind, client, source, policy, name, received);
    };
    client.on('data', onData);
  }

  private async forward(
    kind: Kind,
    client: Socket,
    source: string,
    policy: EgressPolicy,
    name: string | undefined,
    first: Buffer,
  ): Promise<void> {
    const port = (this.deps.upstreamPorts ?? WEB_PORTS)[kind];
    const refuse = (why: string) => {
      this.deps.logger.info({ source, name, port, why }, 'egress refused by the session policy');
      if (kind === 'http') {
        client.end(
          'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n' +
            `${name ?? 'this destination'} is not allowed by the session's egress policy\n`,
        );
      } else client.destroy();
    };
    // A name that is an address is no name: the rules on addresses were the firewall's.
    if (name === undefined || isIPv4(name) || !name.includes('.')) return refuse('no name');
    // Before any lookup: a name the policy does not allow is never asked of a resolver, where
    // it would carry data out (issue 40), as the node's DNS filter keeps it home.
    if (!nameDecision(policy, name)) return refuse('name not allowed');
    let addresses: string[];
    try {
      addresses = await withTimeout(this.deps.resolve(name), RESOLVE_MS);
    } catch {
      return refuse('name not resolved');
    }
    const allowed = addresses.filter(
      (address) =>
        isIPv4(address) &&
        !this.deps.closedByNode(address) &&
        egressDecision(policy, ipv4(address) ?? -1, name),
    );
    const target = allowed[0];
    if (target === undefined) return refuse(addresses.length === 0 ? 'no address' : 'not allowed');
    const upstream = connect({ host: target, port });
    this.track(upstream);
    const giveUp = setTimeout(() => upstream.destroy(), CONNECT_MS);
    upstream.once('connect', () => {
      clearTimeout(giveUp);
      upstream.write(first);
      upstream.pipe(client);
      client.pipe(upstream);
      client.resume();
    });
    upstream.once('close', () => client.destroy());
    client.once('close', () => upstream.destroy());
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/**
 * How the node resolves names for the proxy: through `servers` (`ip` or `ip:port`), or as the
 * node's own programs do (its resolver configuration) when none is given.
 */
export function nodeResolver(servers: readonly string[]): (name: string) => Promise<string[]> {
  if (servers.length === 0) {
    return async (name) =>
      (await dns.lookup(name, { all: true, family: 4 })).map((entry) => entry.address);
  }
  const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([...servers]);
  return (name) => resolver.resolve4(name);
}
