// The benchmarks' own measures, checked with Node's test runner (`pnpm test:bench`): a figure
// is only as good as the way it was taken.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closedLoopOf, measureAlternated, openLoop, poissonArrivals, sleep } from './timing.mjs';

test('Poisson arrivals come at the rate asked, bunched, the same for the same seed', () => {
  const arrivals = poissonArrivals(20_000, 300, 7);
  const gaps = arrivals.map((at, i) => at - (arrivals[i - 1] ?? 0));
  const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
  assert.ok(Math.abs(mean - 1000 / 300) < 1e-9, `mean gap ${mean} ms`);
  assert.ok(Math.abs(poissonArrivals(1200, 300, 1).at(-1) - 4000) < 1e-9, 'the last at 4 s');
  assert.ok(
    gaps.every((gap) => gap >= 0),
    'in order',
  );
  // An exponential distribution's standard deviation is its mean: evenly spaced arrivals
  // would have none.
  const sd = Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length);
  assert.ok(Math.abs(sd / mean - 1) < 0.05, `standard deviation ${sd} ms`);
  assert.deepEqual(poissonArrivals(20_000, 300, 7), arrivals);
  assert.notDeepEqual(poissonArrivals(20_000, 300, 8), arrivals);
});

test('an open loop sends calls without waiting for answers, and reports the rate answered', async () => {
  let inFlight = 0;
  let most = 0;
  const result = await openLoop('slow answers', 40, 400, async () => {
    inFlight += 1;
    most = Math.max(most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 50));
    inFlight -= 1;
  });
  // 40 calls over about 100 ms, each answered after 50 ms: many at once, as a closed loop of
  // one client would never have.
  assert.ok(most >= 5, `at most ${most} in flight`);
  assert.match(result.note, new RegExp(`at most ${most} in flight`));
  assert.equal(result.rounds, 40);
  assert.ok(result.p50 >= 50, `p50 ${result.p50} ms`);
  assert.ok(result.perSecond > 0 && result.perSecond < 400, `${result.perSecond}/s`);
});

test('an open loop times each call from its arrival, not from when it was sent', async () => {
  // The first call holds the event loop for 120 ms; the calls due meanwhile are sent late,
  // and answered at once. Their lateness is part of their latency (no coordinated omission).
  let first = true;
  const result = await openLoop('a stalled sender', 20, 1000, async () => {
    if (!first) return;
    first = false;
    const until = Date.now() + 120;
    while (Date.now() < until);
  });
  assert.ok(result.p50 >= 40, `p50 ${result.p50} ms`);
  assert.ok(result.p99 >= 100, `p99 ${result.p99} ms`);
});

test('a closed loop over given clients keeps each busy until the calls asked for are made', async () => {
  const calls = new Map();
  let inFlight = 0;
  let most = 0;
  const { times, seconds } = await closedLoopOf(['a', 'b', 'c'], 10, async (client) => {
    calls.set(client, (calls.get(client) ?? 0) + 1);
    inFlight += 1;
    most = Math.max(most, inFlight);
    await new Promise((resolve) => setTimeout(resolve, 1));
    inFlight -= 1;
  });
  assert.equal(times.length, 10);
  assert.equal(
    [...calls.values()].reduce((sum, n) => sum + n, 0),
    10,
  );
  assert.equal(most, 3, 'one call per client at a time, all clients at once');
  assert.deepEqual(
    times,
    [...times].sort((x, y) => x - y),
  );
  assert.ok(seconds > 0);
});

test('rows measured alternately take turns in blocks, each its own rounds, in a new order each block', async () => {
  const calls = [];
  const rowOf = (name, rounds, ms) => ({
    name,
    rounds,
    fn: () => {
      calls.push(name);
      return new Promise((resolve) => setTimeout(resolve, ms));
    },
    extra: { note: name },
  });
  const [a, b] = await measureAlternated([rowOf('a', 4, 1), rowOf('b', 6, 12)], 2, 1);
  // One untimed call of each, then two blocks: a's half and b's, then b's half and a's.
  assert.deepEqual(calls.join(''), 'ab' + 'aa' + 'bbb' + 'bbb' + 'aa');
  assert.equal(a.rounds, 4);
  assert.equal(b.rounds, 6);
  assert.equal(a.note, 'a');
  assert.ok(a.p50 < b.p50, `a ${a.p50} ms, b ${b.p50} ms`);
});

test('a wait already past is no wait, and no warning (Node 24 warns of a negative timeout)', async () => {
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning.name);
  process.on('warning', onWarning);
  try {
    await sleep(-0.0004);
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(warnings, []);
});
