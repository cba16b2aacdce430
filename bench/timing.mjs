// Timing helpers of the benchmarks, with no imports: the bench's load generator (a child
// process, bench/http-load.mjs) uses them without loading the services.

export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A table row from latencies in ms (sorts `times`). */
export function row(name, rounds, times, extra = {}) {
  times.sort((a, b) => a - b);
  return { name, rounds, p50: percentile(times, 50), p99: percentile(times, 99), ...extra };
}

export const elapsedMs = (since) => Number(process.hrtime.bigint() - since) / 1e6;

/** `rounds` timed calls of `fn` after a few untimed ones; `before` runs untimed ahead of each. */
export async function measure(name, rounds, fn, { before, warmup = 5, ...extra } = {}) {
  for (let i = 0; i < Math.min(warmup, rounds); i += 1) {
    await before?.();
    await fn();
  }
  const times = [];
  for (let i = 0; i < rounds; i += 1) {
    await before?.();
    const started = process.hrtime.bigint();
    await fn();
    times.push(elapsedMs(started));
  }
  return row(name, rounds, times, extra);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
