// The soak's measures (bench/soak.mjs): latencies per window and operation, errors by kind,
// the services' RSS over time.
import { readFileSync } from 'node:fs';
import { elapsedMs, percentile } from './timing.mjs';

/** A failed operation, by kind: a journey ends with it. */
export class OpError extends Error {}

export class SoakStats {
  startedAt = Date.now();
  /** Latencies by window, then operation. */
  latencies = new Map();
  /** Error counts by `operation: kind`. */
  errors = new Map();
  rssSamples = [];

  constructor(windowS, opTimeoutMs) {
    this.windowS = windowS;
    this.opTimeoutMs = opTimeoutMs;
  }

  windowOf(at) {
    return Math.floor((at - this.startedAt) / (this.windowS * 1000));
  }

  record(op, ms) {
    const window = this.windowOf(Date.now());
    if (!this.latencies.has(window)) this.latencies.set(window, new Map());
    const ops = this.latencies.get(window);
    if (!ops.has(op)) ops.set(op, []);
    ops.get(op).push(ms);
  }

  countError(op, kind) {
    const key = `${op}: ${kind}`;
    this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
  }

  /** Times `fn` as `op`; a failure is counted by kind and ends the journey (rethrown). */
  async timed(op, fn) {
    const started = process.hrtime.bigint();
    try {
      const result = await fn(AbortSignal.timeout(this.opTimeoutMs));
      this.record(op, elapsedMs(started));
      return result;
    } catch (err) {
      const kind =
        err instanceof OpError
          ? err.message
          : err.name === 'TimeoutError'
            ? `timed out (${this.opTimeoutMs / 1000} s)`
            : `network: ${err.cause?.code ?? err.code ?? err.message}`;
      this.countError(op, kind);
      throw new OpError(kind);
    }
  }

  /** Samples the RSS of the service's processes (`{ agent, gateway, edge }`). */
  sampleRss(processes) {
    const { agent, gateway, edge } = processes;
    this.rssSamples.push({
      at: Date.now(),
      agent: rssKb(agent.pid),
      gateway: rssKb(gateway.pid),
      edge: rssKb(edge.pid),
    });
  }

  windowsReport() {
    const rows = [];
    for (const [window, ops] of [...this.latencies].sort((a, b) => a[0] - b[0])) {
      for (const [op, times] of [...ops].sort()) {
        times.sort((a, b) => a - b);
        rows.push({
          window,
          from: `${(window * this.windowS) / 60} min`,
          op,
          count: times.length,
          p50: Math.round(percentile(times, 50) * 10) / 10,
          p99: Math.round(percentile(times, 99) * 10) / 10,
        });
      }
    }
    return rows;
  }

  rssReport() {
    const byWindow = new Map();
    for (const sample of this.rssSamples) {
      const window = this.windowOf(sample.at);
      const max = byWindow.get(window) ?? { agent: 0, gateway: 0, edge: 0 };
      for (const name of ['agent', 'gateway', 'edge'])
        max[name] = Math.max(max[name], sample[name]);
      byWindow.set(window, max);
    }
    return [...byWindow].map(([window, max]) => ({
      window,
      from: `${(window * this.windowS) / 60} min`,
      agentMb: Math.round(max.agent / 1024),
      gatewayMb: Math.round(max.gateway / 1024),
      edgeMb: Math.round(max.edge / 1024),
    }));
  }
}

function rssKb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}
