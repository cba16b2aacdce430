import { createSocket, type Socket } from 'node:dgram';
import * as packet from 'dns-packet';

/**
 * A DNS server on loopback that knows only `names` (A records) and answers NXDOMAIN for the
 * rest: what the node's egress proxy resolves through in tests, so that no query leaves the
 * machine. `queries` lists every name asked.
 */
export class LocalResolver {
  readonly queries: string[] = [];
  private socket: Socket | undefined;
  address = '';

  constructor(private readonly names: Record<string, string>) {}

  async start(): Promise<void> {
    const socket = createSocket('udp4');
    this.socket = socket;
    socket.on('message', (message, remote) => {
      let query: packet.Packet;
      try {
        query = packet.decode(message);
      } catch {
        return;
      }
      const question = query.questions?.[0];
      const name = question?.name.toLowerCase() ?? '';
      this.queries.push(name);
      const address = question?.type === 'A' ? this.names[name] : undefined;
      const answer = packet.encode({
        type: 'response',
        id: query.id ?? 0,
        flags:
          packet.RECURSION_DESIRED |
          packet.RECURSION_AVAILABLE |
          (address || this.names[name] ? 0 : 3),
        questions: query.questions ?? [],
        answers:
          address === undefined ? [] : [{ type: 'A', class: 'IN', name, ttl: 5, data: address }],
      });
      socket.send(answer, remote.port, remote.address);
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    this.address = `127.0.0.1:${socket.address().port}`;
  }

  stop(): void {
    this.socket?.close();
  }
}
