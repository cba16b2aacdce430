import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { NodeStatus } from '../agents/agent-messages';
import type { NodeHealth } from '../nodes/node-health';
import type { NodeState } from '../nodes/node-store';

/** What the gauges read at each scrape. */
export interface GatewayGaugeSources {
  sessionsByState(): Promise<Record<string, number>>;
  webhookBacklog(): Promise<{ pending: number; oldestAgeS: number }>;
  nodes(): Array<{ nodeId: string; state: NodeState; health: NodeHealth; status?: NodeStatus }>;
}

/**
 * A route's full pattern: routers mounted under /v1 and /admin/v1 know only the rest of it
 * (and express has restored `baseUrl` by the time a response closes).
 */
export function routeLabel(originalUrl: string, routePath: string): string {
  if (/^\/(v1|admin|internal)\//.test(routePath) || !routePath.startsWith('/')) return routePath;
  if (originalUrl.startsWith('/admin/v1/')) return `/admin/v1${routePath}`;
  if (originalUrl.startsWith('/v1/')) return `/v1${routePath}`;
  return routePath;
}

/** Seconds: from a fast path (a few ms) to a long run (5 min). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 300];

/**
 * The gateway's Prometheus metrics, in a registry of its own (several gateways may share a
 * process, as in the tests): requests by route, method and status with their latency, wakes,
 * and gauges read at each scrape (sessions by state, nodes, webhook backlog).
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly wakes: Histogram<'from' | 'moved'>;

  constructor(sources: GatewayGaugeSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'gateway_http_requests_total',
      help: 'HTTP requests answered, by route, method and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    const durations = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Histogram<L>({ name, help, labelNames, buckets: DURATION_BUCKETS, registers });
    this.latency = durations(
      'gateway_http_request_duration_seconds',
      'Time to answer an HTTP request (a streamed run: until its stream ended)',
      ['method', 'route'],
    );
    this.wakes = durations(
      'gateway_session_wake_duration_seconds',
      'Time to wake a session before its request, from idle or deep sleep',
      ['from', 'moved'],
    );
    new Gauge({
      name: 'gateway_sessions',
      help: 'Live sessions by state (all gateway replicas: read from Postgres)',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        for (const [state, count] of Object.entries(await sources.sessionsByState())) {
          this.set({ state }, count);
        }
      },
    });
    const backlogAge = new Gauge({
      name: 'gateway_webhook_backlog_oldest_seconds',
      help: 'Age of the oldest pending webhook delivery (0: none)',
      registers,
    });
    new Gauge({
      name: 'gateway_webhook_backlog',
      help: 'Webhook deliveries pending',
      registers,
      async collect() {
        const { pending, oldestAgeS } = await sources.webhookBacklog();
        this.set(pending);
        backlogAge.set(oldestAgeS);
      },
    });
    this.nodeGauges(sources);
  }

  /** Per node, as this replica's heartbeats saw it. */
  private nodeGauges(sources: GatewayGaugeSources): void {
    const registers = [this.registry];
    const perNode = (
      name: string,
      help: string,
      value: (status: NodeStatus) => number,
    ): Gauge<'node'> =>
      new Gauge({
        name,
        help,
        labelNames: ['node'],
        registers,
        collect() {
          this.reset();
          for (const node of sources.nodes()) {
            if (node.status !== undefined) this.set({ node: node.nodeId }, value(node.status));
          }
        },
      });
    new Gauge({
      name: 'gateway_node_up',
      help: "1 while the node's heartbeat answers (this replica's view), else 0",
      labelNames: ['node', 'state'],
      registers,
      collect() {
        this.reset();
        for (const node of sources.nodes()) {
          this.set({ node: node.nodeId, state: node.state }, node.health === 'up' ? 1 : 0);
        }
      },
    });
    perNode('gateway_node_sandboxes', 'Sandboxes on the node', (s) => s.sandboxes);
    perNode(
      'gateway_node_max_sandboxes',
      'Sandboxes the node takes at most',
      (s) => s.maxSandboxes,
    );
    perNode(
      'gateway_node_memory_available_bytes',
      'Memory available on the node',
      (s) => s.memoryAvailableBytes,
    );
    perNode('gateway_node_load_average', "The node's 1-minute load average", (s) => s.loadAverage);
    perNode('gateway_node_pool_ready', 'Warm sandboxes ready on the node', (s) =>
      s.pool.reduce((sum, shape) => sum + shape.ready, 0),
    );
  }

  /** Counts each request and its latency at its end, by the route that served it. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const end = this.latency.startTimer();
      res.on('close', () => {
        const routePath = (req.route as { path?: unknown } | undefined)?.path;
        const route =
          typeof routePath === 'string' ? routeLabel(req.originalUrl, routePath) : 'unmatched';
        end({ method: req.method, route });
        this.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      });
      next();
    };
  }

  observeWake(from: 'idle' | 'deep-sleep', seconds: number, moved: boolean): void {
    this.wakes.observe({ from, moved: String(moved) }, seconds);
  }
}
