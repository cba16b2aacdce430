import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60];

/**
 * The edge proxy's Prometheus metrics, in a registry of its own: preview requests by status
 * class with their latency, and WebSocket upgrades.
 */
export class EdgeMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'status'>;
  private readonly latency: Histogram;
  private readonly upgrades: Counter;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'edge_http_requests_total',
      help: 'Preview requests answered, by status',
      labelNames: ['status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'edge_http_request_duration_seconds',
      help: 'Time to answer a preview request (to the end of its response)',
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.upgrades = new Counter({
      name: 'edge_websocket_upgrades_total',
      help: 'WebSocket upgrades asked for',
      registers,
    });
  }

  /** Counts `server`'s requests and upgrades. */
  watch(server: Server): void {
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      const end = this.latency.startTimer();
      res.on('close', () => {
        end();
        this.requests.inc({ status: String(res.statusCode) });
      });
    });
    server.on('upgrade', () => this.upgrades.inc());
  }
}
