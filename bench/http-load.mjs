// The load generator of pnpm bench's preview rows, a child process of the bench (forked by
// `startHttpLoad` in lib.mjs) so that its event loop is neither the edge proxy's nor the
// agent's. It GETs / on an origin (with another Host header, for the edge) and answers each
// request of its parent with a table row:
//   { op: 'latency', name, target, rounds, warmup }: one request at a time, after `warmup`
//     untimed ones;
//   { op: 'throughput', name, target, clients, maxRequests, maxMs }: `clients` concurrent
//     keep-alive clients until `maxRequests` have been sent or `maxMs` have passed.
// `target` is { origin, host? }. Loopback only: the origins are the bench's own.
import { Agent, request } from 'node:http';
import { elapsedMs, measure, row } from './timing.mjs';

/** One keep-alive pool per target, so that each row reuses its own connections. */
const pools = new Map();

function poolFor(target, clients) {
  const key = `${target.origin} ${target.host ?? ''}`;
  let pool = pools.get(key);
  if (pool === undefined) {
    pool = new Agent({ keepAlive: true, maxSockets: clients });
    pools.set(key, pool);
  }
  pool.maxSockets = Math.max(pool.maxSockets, clients);
  return pool;
}

/** GET / on the target; fails unless it answers 200 "ok". */
function httpGet(pool, target) {
  const origin = new URL(target.origin);
  const label = target.host ?? origin.host;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent: pool,
        host: origin.hostname,
        port: origin.port,
        path: '/',
        headers: { ...target.headers, ...(target.host ? { host: target.host } : {}) },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () =>
          res.statusCode === 200 && body === 'ok'
            ? resolve()
            : reject(new Error(`GET ${label}: ${res.statusCode} ${body.slice(0, 200)}`)),
        );
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${label}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}

async function throughput({ name, target, clients, maxRequests, maxMs }) {
  const pool = poolFor(target, clients);
  const get = () => httpGet(pool, target);
  await Promise.all(Array.from({ length: clients }, get)); // open the connections
  const times = [];
  let sent = 0;
  const started = process.hrtime.bigint();
  const deadline = performance.now() + maxMs;
  const client = async () => {
    while (sent < maxRequests && performance.now() < deadline) {
      sent += 1;
      const begun = process.hrtime.bigint();
      await get();
      times.push(elapsedMs(begun));
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return row(name, times.length, times, { perSecond: times.length / (elapsedMs(started) / 1000) });
}

const operations = {
  latency: ({ name, target, rounds, warmup }) => {
    const pool = poolFor(target, 1);
    return measure(name, rounds, () => httpGet(pool, target), { warmup });
  },
  throughput,
};

process.on('message', (message) => {
  const operation = operations[message.op];
  const result = operation
    ? operation(message)
    : Promise.reject(new Error(`unknown operation ${message.op}`));
  result.then(
    (answer) => process.send({ row: answer }),
    (err) => process.send({ error: String(err?.stack ?? err) }),
  );
});
// The parent going away ends the load generator too.
process.on('disconnect', () => {
  for (const pool of pools.values()) pool.destroy();
  process.exit(0);
});
