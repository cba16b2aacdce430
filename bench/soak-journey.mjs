// A session's journey through the soak (bench/soak.mjs): create, write files, run a command,
// run code, stream a run, read a file back, start a web app and visit its preview, and for
// some of them a rest until idle or deep sleep before using it again; then delete.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { OpError } from './soak-stats.mjs';
import { sleep } from './timing.mjs';

export async function call(service, method, path, body, signal) {
  const response = await fetch(`${service.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${service.key}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal,
  });
  const text = await response.text();
  if (!response.ok) {
    let code = '';
    try {
      code = JSON.parse(text).error?.code ?? '';
    } catch {
      // not JSON
    }
    throw new OpError(`${response.status} ${code}`.trim());
  }
  return text;
}

const json = async (promise) => JSON.parse(await promise);

function expectOutput(actual, wanted) {
  if (actual !== wanted) throw new OpError('wrong output');
}

/** A streamed run's events: `{ event, data }` each. */
function sseEvents(text) {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return { event, data };
    });
}

function previewGet(service, sessionId, path, signal) {
  const edge = new URL(service.edgeUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: edge.hostname,
        port: edge.port,
        path,
        signal,
        headers: { host: `${sessionId.replace('_', '-')}.${service.previewDomain}` },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const PREVIEW_APP =
  "require('http').createServer((q, s) => s.end('soak ' + q.url)).listen(3000, '0.0.0.0')";

const runIn = (service) => (body, signal) => json(call(service, 'POST', '/execute', body, signal));

/**
 * One journey, the `n`th: `service` is `{ url, edgeUrl, key, previewDomain }`, `stats` a
 * SoakStats, `live` the sessions not deleted yet, `soak` the idle and deep-sleep delays.
 */
export async function journey({ service, stats, live, soak }, n) {
  const id = await stats.timed('create', async (signal) => {
    const created = await json(call(service, 'POST', '/sessions/create', {}, signal));
    return created.sessionId;
  });
  live.add(id);
  try {
    const content = `journey ${n} ${randomBytes(512).toString('hex')}`;
    await dataSteps(service, stats, id, n, content);
    await previewSteps(service, stats, id);
    await restSteps({ service, stats, soak }, id, n, content);
  } finally {
    await stats
      .timed('delete', (signal) => call(service, 'DELETE', `/sessions/${id}`, undefined, signal))
      .then(() => live.delete(id))
      .catch(() => undefined);
  }
}

/** Files written and read back, a command, code and a streamed run. */
async function dataSteps(service, stats, id, n, content) {
  const run = runIn(service);
  await stats.timed('files.write', (signal) =>
    call(service, 'POST', '/files/write', { sessionId: id, path: 'data/a.txt', content }, signal),
  );
  await stats.timed('run.command', async (signal) => {
    const { stdout } = await run({ sessionId: id, command: 'wc -c < data/a.txt' }, signal);
    expectOutput(stdout.trim(), String(content.length));
  });
  await stats.timed('run.code', async (signal) => {
    const { stdout } = await run(
      {
        sessionId: id,
        code: "console.log(require('fs').readFileSync('data/a.txt', 'utf8').split(' ')[1])",
      },
      signal,
    );
    expectOutput(stdout, `${n}\n`);
  });
  await stats.timed('run.stream', async (signal) => {
    const text = await call(
      service,
      'POST',
      '/execute',
      { sessionId: id, command: 'for i in $(seq 1 300); do echo line-$i; done', stream: true },
      signal,
    );
    const events = sseEvents(text);
    const last = events.at(-1);
    if (last?.event !== 'result') throw new OpError(`stream ended with ${last?.event}`);
    const lines = events
      .filter((e) => e.event === 'stdout')
      .map((e) => JSON.parse(e.data).data ?? '')
      .join('');
    expectOutput(lines.split('\n').length, 301);
  });
  await stats.timed('files.read', async (signal) => {
    const body = await call(
      service,
      'GET',
      `/files/read?sessionId=${id}&path=${encodeURIComponent('data/a.txt')}`,
      undefined,
      signal,
    );
    expectOutput(body, content);
  });
}

/** A web app started in the session, and five visits to its preview. */
async function previewSteps(service, stats, id) {
  const run = runIn(service);
  await stats.timed('preview.start', (signal) =>
    run(
      {
        sessionId: id,
        command: `nohup node -e "${PREVIEW_APP}" >/dev/null 2>&1 & for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3000) 2>/dev/null && break; sleep 0.1; done`,
      },
      signal,
    ),
  );
  for (let i = 0; i < 5; i += 1) {
    await stats.timed('preview.get', async (signal) => {
      const { status, body } = await previewGet(service, id, `/p${i}`, signal);
      if (status !== 200) throw new OpError(`${status}`);
      expectOutput(body, `soak /p${i}`);
    });
  }
}

/** A third of the sessions wait to go idle, a third to go into deep sleep, then come back. */
async function restSteps({ service, stats, soak }, id, n, content) {
  const run = runIn(service);
  const rest = n % 3;
  if (rest === 1) {
    await sleep((soak.idleAfterS + 2) * 1000);
    await stats.timed('run.after-idle', async (signal) => {
      const { stdout } = await run({ sessionId: id, command: 'cat data/a.txt' }, signal);
      expectOutput(stdout, content);
    });
  } else if (rest === 2) {
    await sleep((soak.deepSleepAfterS + 3) * 1000);
    const { state } = await stats.timed('session.get', (signal) =>
      json(call(service, 'GET', `/sessions/${id}`, undefined, signal)),
    );
    if (state !== 'deep-sleep') stats.countError('session.get', `state ${state}, not deep-sleep`);
    await stats.timed('run.after-deep-sleep', async (signal) => {
      const { stdout } = await run({ sessionId: id, command: 'cat data/a.txt' }, signal);
      expectOutput(stdout, content);
    });
  }
}
