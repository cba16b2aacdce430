import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createAccountAt, createSession } from '../support/api';
import { requiredEnv } from '../support/env';
import { closedPort } from '../support/net';
import { containerProcesses, startStack, type TestStack } from '../support/stack';
import { parseEvents, StreamedRun } from '../support/streamed-run';
import { ApiClient } from '../support/api-client';

/**
 * The gateway process killed (SIGKILL) in the middle of a streamed run. The policy
 * (docs/reliability.md, ADR 25): the run goes on as if its client had gone away — it is not
 * the client's — and its output is kept on its node, so that the client resumes the stream
 * through a gateway that is up (here the same program started again) and gets the rest and
 * the result.
 */
let stack: TestStack;
let gateway: ChildProcess | undefined;
const schema = `t_gwkill_${randomBytes(4).toString('hex')}`;
const adminToken = randomBytes(16).toString('hex');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The real gateway program in a process of its own, in a schema of its own. */
async function startGatewayProcess(): Promise<string> {
  const port = await closedPort();
  const database = new URL(requiredEnv('TEST_DATABASE_URL'));
  database.searchParams.set('options', `-c search_path=${schema}`);
  gateway = spawn(process.execPath, [join(__dirname, '../../services/gateway/dist/main.js')], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      PATH: process.env.PATH,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      DATABASE_URL: database.toString(),
      REDIS_URL: requiredEnv('TEST_REDIS_URL'),
      AGENT_NODES: `${stack.nodeId}=${stack.agent.address}`,
      INTERNAL_TOKEN: stack.internalToken,
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'error',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i += 1) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return url;
    await sleep(100);
  }
  throw new Error('the gateway process did not start');
}

beforeAll(async () => {
  stack = await startStack();
  await stack.gateways[0]?.db.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
});

afterAll(async () => {
  gateway?.kill('SIGKILL');
  await stack.gateways[0]?.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await stack?.stop();
});

it('keeps the run going when the gateway dies mid-stream; the stream resumes through the next', async () => {
  const first = await startGatewayProcess();
  const { key } = await createAccountAt({ url: first, adminToken }, 'paid');
  const sessionId = await createSession(first, key);
  const response = await new ApiClient({ url: first }, key).executeStream(sessionId, {
    command: 'nohup sleep 300 >/dev/null 2>&1 & echo started; sleep 2; echo finished; exit 6',
  });
  const stream = new StreamedRun(response);
  await stream.untilStdout('started');
  gateway?.kill('SIGKILL');
  await stream.rest(); // the connection is cut
  const lastId = stream.events().at(-1)?.id ?? '';

  const processes = (await containerProcesses(stack.nodeId, sessionId)).map((p) => p.args);
  expect(processes).toContain('sleep 2'); // the run's command, not hung up
  const next = await startGatewayProcess();
  const resumed = await new ApiClient({ url: next }, key).executeStream(sessionId, {}, undefined, {
    'last-event-id': lastId,
  });
  const rest = parseEvents(await resumed.text());
  expect(rest.filter((e) => e.event === 'stdout').map((e) => e.data['data'])).toEqual([
    'finished\n',
  ]);
  expect(rest.at(-1)?.data).toMatchObject({ exitCode: 6, stdout: 'started\nfinished\n' });
  const after = (await containerProcesses(stack.nodeId, sessionId)).map((p) => p.args);
  expect(after.filter((p) => p.includes('sleep 300'))).toHaveLength(1);
});
