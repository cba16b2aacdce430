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

/**
 * Rows measured in turn, in `blocks` blocks each (a few untimed calls of each first), so that
 * a row and its baseline meet the same moments of the machine rather than one hour's quiet
 * minute and another's busy one: block b times `rounds / blocks` calls of every row, the rows
 * taken in turn, each block starting with a different row. `rows`: {name, rounds, fn, extra}.
 */
export async function measureAlternated(rows, blocks, warmup = 5) {
  for (const { fn } of rows) for (let i = 0; i < warmup; i += 1) await fn();
  const times = rows.map(() => []);
  for (let block = 0; block < blocks; block += 1) {
    for (let turn = 0; turn < rows.length; turn += 1) {
      const r = (block + turn) % rows.length;
      const { rounds, fn } = rows[r];
      const calls =
        Math.floor((rounds * (block + 1)) / blocks) - Math.floor((rounds * block) / blocks);
      for (let i = 0; i < calls; i += 1) {
        const started = process.hrtime.bigint();
        await fn();
        times[r].push(elapsedMs(started));
      }
    }
  }
  return rows.map(({ name, rounds, extra }, r) => row(name, rounds, times[r], extra));
}

/**
 * A closed loop over given clients (sessions): each of `clients` calls `fn(client)` again as
 * soon as its call answered, until `total` calls were made in all, its first call timed as the
 * rest. Resolves with their latencies in ms (sorted) and the seconds the whole took.
 */
export async function closedLoopOf(clients, total, fn) {
  const times = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (client) => {
      while (next < total) {
        next += 1;
        const begun = process.hrtime.bigint();
        await fn(client);
        times.push(elapsedMs(begun));
      }
    }),
  );
  const seconds = elapsedMs(started) / 1000;
  times.sort((a, b) => a - b);
  return { times, seconds };
}

/** Waits `ms` (a wait already past, as an arrival's can be by the time it is asked: none). */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Numbers in [0, 1) from a fixed seed (mulberry32). */
function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * When `count` calls arrive, in ms from the first moment, at `ratePerSecond`: the gaps are drawn
 * from an exponential distribution (Poisson arrivals, which bunch as independent clients' calls
 * do), from a fixed `seed` so that every run of a bench offers the same load, then scaled so
 * that the last arrives at `count / ratePerSecond` s: a draw's own mean is never the rate asked.
 */
export function poissonArrivals(count, ratePerSecond, seed) {
  const random = seededRandom(seed);
  const arrivals = [];
  let at = 0;
  for (let i = 0; i < count; i += 1) {
    at -= Math.log(1 - random());
    arrivals.push(at);
  }
  const scale = (count * 1000) / ratePerSecond / at;
  return arrivals.map((arrival) => arrival * scale);
}

/**
 * `count` calls of `fn` arriving at `ratePerSecond` on average, each sent at its time whether or
 * not the earlier ones were answered (an open loop: many independent clients, as a service
 * meets them), at the times `poissonArrivals` draws. Each latency runs from the
 * call's scheduled arrival, not from when the generator got round to sending it, so a generator
 * or gateway falling behind counts against the row. The rate is the calls answered over the
 * time from the first arrival to the last answer: under the offered rate when the node cannot
 * keep up, its latencies then growing with the queue.
 */
export async function openLoop(name, count, ratePerSecond, fn) {
  const arrivals = poissonArrivals(count, ratePerSecond, 300);
  const times = [];
  const calls = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < count;) {
    while (i < count && arrivals[i] <= elapsedMs(started)) {
      const due = arrivals[i];
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      calls.push(
        fn(i).then(() => {
          inFlight -= 1;
          times.push(elapsedMs(started) - due);
        }),
      );
      i += 1;
    }
    if (i < count) await sleep(arrivals[i] - elapsedMs(started));
  }
  await Promise.all(calls);
  const seconds = (elapsedMs(started) - arrivals[0]) / 1000;
  return row(name, count, times, {
    perSecond: count / seconds,
    note: `offered ${ratePerSecond}/s, Poisson arrivals; at most ${mostInFlight} in flight`,
  });
}

/** `count` calls of `fn` (given the call's index), `concurrency` at a time; latencies and the rate. */
export async function concurrently(name, count, concurrency, fn, extra = {}) {
  let next = 0;
  const clients = Array.from({ length: concurrency }, (_, k) => k);
  const { times, seconds } = await closedLoopOf(clients, count, () => fn(next++));
  return row(name, count, times, { perSecond: count / seconds, ...extra });
}

/**
 * `concurrency` clients, each making one call of `fn` and then the next once it is answered (a
 * closed loop), until `count` calls were made after each client's first. The first calls all
 * start at once: each waits for all the others to pass every stage before the pipeline runs
 * full, so they are a row of their own (`burstName`), and the steady row (`name`) times the
 * `count` calls after them. Its rate runs from the first of those calls to the last answer.
 */
export async function closedLoop(name, burstName, count, concurrency, fn, note) {
  const burst = [];
  const times = [];
  let next = 0;
  let started;
  const client = async (k) => {
    const first = process.hrtime.bigint();
    await fn(k);
    burst.push(elapsedMs(first));
    started ??= process.hrtime.bigint();
    while (next < count) {
      const i = next;
      next += 1;
      const begun = process.hrtime.bigint();
      await fn(concurrency + i);
      times.push(elapsedMs(begun));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, k) => client(k)));
  return [
    row(burstName, concurrency, burst, { note: 'the last of them answered at the p99' }),
    row(name, count, times, { perSecond: count / (elapsedMs(started) / 1000), note }),
  ];
}
