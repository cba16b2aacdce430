import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, createServer, isIPv4, type Server, type Socket } from 'node:net';
import * as packet from 'dns-packet';
import { nameDecision, type EgressPolicy } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import { listenOnEphemeralPort } from './listen';

/** How long an upstream resolver has to answer one query, before the next one is asked. */
const UPSTREAM_MS = 2_000;
/** A DNS message over TCP is at most this long (its length is two bytes). */
const MAX_TCP_MESSAGE = 65_535;
/** How long a TCP client may stay connected between two queries. */
const TCP_IDLE_MS = 10_000;

/** A resolver the filter forwards allowed names to. */
export interface Upstream {
  host: string;
  port: number;
}

export interface DnsFilterDeps {
  /** The policy of the sandbox at this address (undefined: none held there). */
  policyFor(ip: string): EgressPolicy | undefined;
  /** Where allowed names are resolved, asked in order. */
  upstreams: readonly Upstream[];
  logger: Logger;
}

/** The ports the filter listens on. */
export interface DnsFilterPorts {
  udp: number;
  tcp: number;
}

/** `ip` or `ip:port` (53 by default), as SANDBOX_EGRESS_DNS and resolv.conf give them. */
export function parseUpstreams(servers: readonly string[]): Upstream[] {
  return servers.flatMap((server) => {
    const [host = '', port] = server.split(':');
    return isIPv4(host) ? [{ host, port: port === undefined ? 53 : Number(port) }] : [];
  });
}

/**
 * What the filter answers to one query from a sandbox under `policy`: undefined to forward
 * it as it is, or the refusal to send back. One question only (what resolvers send); a name
 * the policy does not allow gets NXDOMAIN, and never leaves the node.
 */
export function filterQuery(
  policy: EgressPolicy | undefined,
  query: packet.Packet,
): { refusal: packet.Packet; name: string } | undefined {
  const questions = query.questions ?? [];
  const name = questions[0]?.name ?? '';
  const refuse = (rcode: number) => ({
    name,
    refusal: {
      type: 'response' as const,
      id: query.id ?? 0,
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | rcode,
      questions,
    },
  });
  if (policy === undefined || query.type !== 'query' || questions.length !== 1) {
    return refuse(RCODE.REFUSED);
  }
  return nameDecision(policy, name) ? undefined : refuse(RCODE.NXDOMAIN);
}

const RCODE = { NXDOMAIN: 3, REFUSED: 5 } as const;

/**
 * The node's DNS filter for sessions whose egress policy names domains (issue 40): their DNS,
 * to whatever address on port 53, over UDP or TCP, is taken here by the node's firewall
 * (network/session-egress.ts), Docker's DNS forwarding included. A name the session's policy
 * allows is asked of the node's resolvers, and the answer relayed as it came; any other name
 * is answered NXDOMAIN here, so that no query carries data out under an allow-list.
 */
export class DnsFilter {
  private udp: UdpSocket | undefined;
  private tcp: Server | undefined;
  private readonly sockets = new Set<AnySocket>();

  constructor(private readonly deps: DnsFilterDeps) {}

  async listen(host: string): Promise<DnsFilterPorts> {
    const udp = createSocket('udp4');
    this.udp = udp;
    udp.on('message', (message, remote) => {
      void this.answer(remote.address, message, 'udp').then((reply) => {
        if (reply !== undefined) udp.send(reply, remote.port, remote.address);
      });
    });
    udp.on('error', (err) => this.deps.logger.warn({ err }, 'the DNS filter socket failed'));
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    const tcp = createServer((client) => this.serveTcp(client));
    this.tcp = tcp;
    return { udp: udp.address().port, tcp: await listenOnEphemeralPort(tcp, host) };
  }

  /** Stops serving; a second call does nothing (a runtime may be stopped twice). */
  close(): void {
    this.udp?.close();
    this.udp = undefined;
    this.tcp?.close();
    this.tcp = undefined;
    for (const socket of this.sockets) closeSocket(socket);
  }

  /** The reply to one message from `source` (undefined: none, e.g. not DNS at all). */
  private async answer(
    source: string,
    message: Buffer,
    over: 'udp' | 'tcp',
  ): Promise<Buffer | undefined> {
    let query: packet.Packet;
    try {
      query = packet.decode(message);
    } catch {
      return undefined;
    }
    const policy = this.deps.policyFor(source.replace(/^::ffff:/, ''));
    const filtered = filterQuery(policy, query);
    if (filtered !== undefined) {
      // Debug only: a sandbox could otherwise fill the node's log with names.
      this.deps.logger.debug({ source, name: filtered.name }, 'DNS name refused by the policy');
      return packet.encode(filtered.refusal);
    }
    for (const upstream of this.deps.upstreams) {
      // As a stub resolver does: UDP first, TCP for a TCP client whose answer was truncated
      // (a UDP client gets it truncated, and asks again over TCP).
      let reply = await askUdp(upstream, message, this.sockets).catch(() => undefined);
      if (reply !== undefined && over === 'tcp' && truncated(reply)) {
        reply = await askTcp(upstream, message, this.sockets).catch(() => undefined);
      }
      if (reply !== undefined) return reply;
    }
    return packet.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | 2, // SERVFAIL
      questions: query.questions ?? [],
    });
  }

  /** Queries over TCP: each a two-byte length, then the message; answered in turn. */
  private serveTcp(client: Socket): void {
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    client.setTimeout(TCP_IDLE_MS, () => client.destroy());
    const source = client.remoteAddress ?? '';
    let received = Buffer.alloc(0);
    let busy = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > 2 + MAX_TCP_MESSAGE) return client.destroy();
      while (received.length >= 2) {
        const length = received.readUInt16BE(0);
        if (received.length < 2 + length) break;
        const message = received.subarray(2, 2 + length);
        received = received.subarray(2 + length);
        busy = busy.then(async () => {
          const reply = await this.answer(source, message, 'tcp');
          if (reply === undefined) client.destroy();
          else client.write(framed(reply));
        });
      }
    });
  }
}

/** Whether a DNS message has its TC flag (the answer did not fit a UDP datagram). */
function truncated(message: Buffer): boolean {
  return message.length > 2 && (message[2] ?? 0) & 0x02 ? true : false;
}

function framed(message: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length);
  return Buffer.concat([length, message]);
}

type AnySocket = Socket | UdpSocket;

function closeSocket(socket: AnySocket): void {
  if ('destroy' in socket) socket.destroy();
  else socket.close();
}

/**
 * One exchange with an upstream on `socket`: `listen` settles it with the answer or a failure;
 * a socket error, or UPSTREAM_MS without an answer, fails it. Either way, once, the socket is
 * closed and forgotten.
 */
function exchange(
  socket: AnySocket,
  sockets: Set<AnySocket>,
  listen: (answer: (reply: Buffer) => void, fail: (err: Error) => void) => void,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    sockets.add(socket);
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sockets.delete(socket);
      closeSocket(socket);
      settle();
    };
    const fail = (err: Error) => finish(() => reject(err));
    const timer = setTimeout(() => fail(new Error('no answer')), UPSTREAM_MS);
    (socket as NodeJS.EventEmitter).on('error', fail);
    listen((reply) => finish(() => resolve(reply)), fail);
  });
}

/** One query to an upstream over UDP: the answer to this query (its id), from the server asked. */
function askUdp(upstream: Upstream, message: Buffer, sockets: Set<AnySocket>): Promise<Buffer> {
  const socket = createSocket('udp4');
  return exchange(socket, sockets, (answer) => {
    socket.on('message', (reply) => {
      if (reply.length >= 2 && reply.readUInt16BE(0) === message.readUInt16BE(0)) answer(reply);
    });
    socket.send(message, upstream.port, upstream.host);
  });
}

/** One query to an upstream over TCP: a two-byte length, then the message, each way. */
function askTcp(upstream: Upstream, message: Buffer, sockets: Set<AnySocket>): Promise<Buffer> {
  const socket = connect({ host: upstream.host, port: upstream.port });
  return exchange(socket, sockets, (answer, fail) => {
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > 2 + MAX_TCP_MESSAGE) return fail(new Error('answer too long'));
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
      answer(received.subarray(2, 2 + received.readUInt16BE(0)));
    });
    socket.on('connect', () => socket.write(framed(message)));
  });
}
