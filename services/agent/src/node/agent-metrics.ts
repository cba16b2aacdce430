import type * as grpc from '@grpc/grpc-js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AdmissionStats } from '../runtime/admission';
import type { EngineStatus } from '../runtime/docker/engine-watch';
import type { PoolRefill, PoolStatus } from '../runtime/sandbox-runtime';
import { readNodeLoad } from './node-load';

/** What the gauges read at each scrape. */
export interface AgentGaugeSources {
  sandboxes(): Promise<number>;
  pool(): PoolStatus[];
  poolRefill(): PoolRefill | undefined;
  coldStarts(): AdmissionStats | undefined;
  runStarts(): AdmissionStats | undefined;
  /** The watch of the container engine, when there is one. */
  engine?(): EngineStatus | undefined;
  maxSandboxes: number;
}

const shapeLabel = (shape: PoolStatus): string => `${shape.memoryMb}:${shape.cpu}:${shape.diskMb}`;

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 300];

/** The gRPC status name of a code (OK, NOT_FOUND, …). */
const STATUS_NAMES: Record<number, string> = {
  0: 'OK',
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  15: 'DATA_LOSS',
  16: 'UNAUTHENTICATED',
};

/**
 * The agent's Prometheus metrics, in a registry of its own: gRPC calls by method and status
 * with their duration (a run, a wake: `Exec`, `RestoreSandbox`), and gauges read at each
 * scrape (sandboxes, warm pool, memory).
 */
export class AgentMetrics {
  readonly registry = new Registry();
  private readonly calls: Counter<'method' | 'code'>;
  private readonly durations: Histogram<'method'>;

  constructor(sources: AgentGaugeSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.calls = new Counter({
      name: 'agent_grpc_calls_total',
      help: 'gRPC calls served, by method and status (a stream: OK when it ended, CANCELLED when its caller left)',
      labelNames: ['method', 'code'],
      registers,
    });
    this.durations = new Histogram({
      name: 'agent_grpc_call_duration_seconds',
      help: 'Time to serve a gRPC call (a run: until it ended)',
      labelNames: ['method'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'agent_sandboxes',
      help: 'Sandboxes on this node (warm pool members included)',
      registers,
      async collect() {
        this.set(await sources.sandboxes());
      },
    });
    new Gauge({
      name: 'agent_max_sandboxes',
      help: 'Sandboxes this node takes at most',
      registers,
      collect() {
        this.set(sources.maxSandboxes);
      },
    });
    new Gauge({
      name: 'agent_pool_ready',
      help: 'Warm sandboxes ready, by shape',
      labelNames: ['shape'],
      registers,
      collect() {
        this.reset();
        for (const shape of sources.pool()) this.set({ shape: shapeLabel(shape) }, shape.ready);
      },
    });
    this.poolMetrics(sources, registers);
    this.admissionMetrics(sources, registers);
    this.engineMetrics(sources, registers);
    new Gauge({
      name: 'agent_memory_available_bytes',
      help: 'Memory available on the host (MemAvailable)',
      registers,
      async collect() {
        this.set((await readNodeLoad()).memoryAvailableBytes);
      },
    });
  }

  /** The warm pool: its size now, its hits and misses, how long refills take (issue 39). */
  private poolMetrics(sources: AgentGaugeSources, registers: Registry[]): void {
    new Gauge({
      name: 'agent_pool_target',
      help: 'Warm sandboxes the pool keeps now, by shape (its size, or more while creates come faster)',
      labelNames: ['shape'],
      registers,
      collect() {
        this.reset();
        for (const shape of sources.pool()) this.set({ shape: shapeLabel(shape) }, shape.target);
      },
    });
    new Counter({
      name: 'agent_pool_claims_total',
      help: 'Creates by shape: served by the pool (hit) or not (miss)',
      labelNames: ['shape', 'result'],
      registers,
      collect() {
        this.reset();
        for (const shape of sources.pool()) {
          this.inc({ shape: shapeLabel(shape), result: 'hit' }, shape.hits);
          this.inc({ shape: shapeLabel(shape), result: 'miss' }, shape.misses);
        }
      },
    });
    new Gauge({
      name: 'agent_pool_refill_last_seconds',
      help: 'How long the last pool member took to make',
      registers,
      collect() {
        this.set((sources.poolRefill()?.lastMs ?? 0) / 1000);
      },
    });
    new Counter({
      name: 'agent_pool_refill_seconds_total',
      help: 'Time spent making pool members (with agent_pool_members_made_total: the mean)',
      registers,
      collect() {
        this.reset();
        this.inc((sources.poolRefill()?.totalMs ?? 0) / 1000);
      },
    });
    new Counter({
      name: 'agent_pool_members_made_total',
      help: 'Pool members made',
      registers,
      collect() {
        this.reset();
        this.inc(sources.poolRefill()?.made ?? 0);
      },
    });
  }

  /** The container engine: wedged or not, and how long it takes to answer the watch's probe. */
  private engineMetrics(sources: AgentGaugeSources, registers: Registry[]): void {
    new Gauge({
      name: 'agent_docker_engine_wedged',
      help: 'The Docker engine has left a network inspect unanswered too long (restart dockerd)',
      registers,
      collect() {
        this.set(sources.engine?.()?.wedged === true ? 1 : 0);
      },
    });
    new Gauge({
      name: 'agent_docker_engine_probe_seconds',
      help: "The engine's last answer to a network inspect, or the wait of the one under way if longer",
      registers,
      collect() {
        const status = sources.engine?.();
        this.set(Math.max(status?.lastProbeMs ?? 0, status?.waitingMs ?? 0) / 1000);
      },
    });
  }

  /** Creates the pool could not serve, and runs being started: under way, waiting, refused (503). */
  private admissionMetrics(sources: AgentGaugeSources, registers: Registry[]): void {
    const admissions = [
      {
        name: 'agent_cold_starts',
        what: 'Creates the pool could not serve',
        of: () => sources.coldStarts(),
      },
      { name: 'agent_run_starts', what: 'Runs being started', of: () => sources.runStarts() },
    ];
    for (const { name, what, of } of admissions) {
      new Gauge({
        name,
        help: `${what}, by state (running, queued)`,
        labelNames: ['state'],
        registers,
        collect() {
          const stats = of();
          this.set({ state: 'running' }, stats?.running ?? 0);
          this.set({ state: 'queued' }, stats?.queued ?? 0);
        },
      });
      new Counter({
        name: `${name}_refused_total`,
        help: `${what}: refused at once (503 with Retry-After), they could not start in time`,
        registers,
        collect() {
          this.reset();
          this.inc(of()?.refused ?? 0);
        },
      });
    }
  }

  /** Times one call of `method`; the returned function ends it with its status code. */
  start(method: string): (code: grpc.status | number) => void {
    const end = this.durations.startTimer({ method });
    let ended = false;
    return (code) => {
      if (ended) return;
      ended = true;
      end();
      this.calls.inc({ method, code: STATUS_NAMES[code] ?? String(code) });
    };
  }
}
