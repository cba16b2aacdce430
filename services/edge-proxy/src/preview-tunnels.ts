import { Agent, request, type ClientRequest, type ClientRequestArgs } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, isErrorCode } from '@sandbox/errors';
import { PREVIEW_HEADERS, previewTunnelTarget, type PreviewTunnelTarget } from '@sandbox/contract';

/** One port of one session, on the node whose agent opens tunnels at `previewAddress`. */
export interface TunnelEnd extends PreviewTunnelTarget {
  previewAddress: string;
}

/** Kept at most; the least recently used pools go first (their tunnels close when idle). */
const MAX_POOLS = 10_000;
/**
 * An idle tunnel is closed after this long (or sooner if the app says so, Keep-Alive:
 * timeout=N), so that an app closing an idle connection rarely races a request onto it.
 */
const IDLE_TUNNEL_MS = 1000;
/** Tunnels to one session port at most; more requests wait for one (as before, per node). */
const MAX_TUNNELS_PER_PORT = 256;

/**
 * Opens one tunnel through the agent at `end.previewAddress`: resolves with the connection
 * to the app once the agent answers 200; rejects with the agent's error (its code from
 * PREVIEW_HEADERS.error) or `bad_gateway` when the agent cannot be reached.
 */
export function openTunnel(end: TunnelEnd, internalToken: string | undefined): Promise<Duplex> {
  const separator = end.previewAddress.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const connect = request({
      host: end.previewAddress.slice(0, separator).replace(/^\[|\]$/g, ''),
      port: Number(end.previewAddress.slice(separator + 1)),
      method: 'CONNECT',
      path: previewTunnelTarget(end),
      headers: internalToken === undefined ? {} : { [PREVIEW_HEADERS.token]: internalToken },
      agent: false,
    });
    connect.once('connect', (answer, socket, head) => {
      if (answer.statusCode === 200) {
        if (head.length > 0) socket.unshift(head);
        socket.setNoDelay(true);
        resolve(socket);
        return;
      }
      socket.destroy();
      const code = answer.headers[PREVIEW_HEADERS.error];
      reject(
        new AppError(
          isErrorCode(code) ? code : 'bad_gateway',
          `The agent refused the tunnel (${answer.statusCode ?? 0})`,
        ),
      );
    });
    connect.once('error', (err) =>
      reject(new AppError('bad_gateway', 'The preview could not be reached', { cause: err })),
    );
    connect.end();
  });
}

/** An HTTP agent whose connections are tunnels to one session's port. */
class TunnelAgent extends Agent {
  constructor(
    private readonly open: () => Promise<Duplex>,
    keepAlive: boolean,
  ) {
    super(
      keepAlive
        ? { keepAlive, timeout: IDLE_TUNNEL_MS, maxSockets: MAX_TUNNELS_PER_PORT }
        : { keepAlive },
    );
  }

  override createConnection(
    _options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): undefined {
    this.open().then(
      (socket) => callback?.(null, socket),
      (err: unknown) => callback?.(err as Error, undefined as unknown as Duplex),
    );
    return undefined;
  }

  // The idle timeout is for idle tunnels only: a reused one may stream for as long as it likes.
  override reuseSocket(socket: Duplex, req: ClientRequest): void {
    super.reuseSocket(socket, req);
    (socket as Duplex & { setTimeout(ms: number): void }).setTimeout(0);
  }
}

/**
 * The edge's connections to apps: a keep-alive pool of tunnels per session port, so that a
 * visit costs the agent no work after the first request and a connection only ever carries
 * one session's traffic. WebSocket upgrades get a tunnel of their own, never a pooled one.
 */
export class PreviewTunnels {
  private readonly pools = new Map<string, Agent>();

  constructor(private readonly internalToken: string | undefined) {}

  /** The pool of tunnels to `end` (kept alive between requests). */
  poolFor(end: TunnelEnd): Agent {
    const key = `${end.previewAddress} ${previewTunnelTarget(end)}`;
    let pool = this.pools.get(key);
    if (pool === undefined) {
      pool = new TunnelAgent(() => openTunnel(end, this.internalToken), true);
      if (this.pools.size >= MAX_POOLS) {
        const oldest = this.pools.keys().next().value;
        if (oldest !== undefined) this.pools.delete(oldest);
      }
    } else {
      this.pools.delete(key);
    }
    this.pools.set(key, pool);
    return pool;
  }

  /** An agent that opens a new tunnel to `end` for each request (for upgrades). */
  single(end: TunnelEnd): Agent {
    return new TunnelAgent(() => openTunnel(end, this.internalToken), false);
  }

  /** Closes every tunnel. */
  destroy(): void {
    for (const pool of this.pools.values()) pool.destroy();
    this.pools.clear();
  }
}
