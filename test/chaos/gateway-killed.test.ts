import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createAccountAt, createSession } from '../support/api';
import { requiredEnv } from '../support/env';
import { closedPort } from '../support/net';
import { containerProcesses, startStack, type TestStack } from '../support/stack';
import { StreamedRun } from '../support/streamed-run';
import { ApiClient } from '../support/api-client';

/**
 * The gateway process killed (SIGKILL) in the middle of a streamed run. The policy
 * (docs/reliability.md): the run is stopped as if its client had gone away — a hangup to its
 * process group, its command killed 0.5 s later, `nohup`ed processes kept — because nobody is
 * left to receive its result. The agent sees its gRPC stream cancelled and tells the runner.
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

it('stops the run as if its client left when the gateway dies mid-stream, keeping nohup', async () => {
  const url = await startGatewayProcess();
  const { key } = await createAccountAt({ url, adminToken }, 'paid');
  const sessionId = await createSession(url, key);
  const response = await new ApiClient({ url }, key).executeStream(sessionId, {
    command: 'nohup sleep 300 >/dev/null 2>&1 & sleep 0.3; echo started; sleep 299',
  });
  const stream = new StreamedRun(response);
  await stream.until('started');
  gateway?.kill('SIGKILL');
  await stream.rest(); // the connection is cut: nobody is left to answer

  let processes: string[] = [];
  for (let i = 0; i < 50; i += 1) {
    processes = (await containerProcesses(stack.nodeId, sessionId)).map((p) => p.args);
    if (!processes.some((p) => p.includes('sleep 299'))) break;
    await sleep(100);
  }
  expect(processes.filter((p) => p.includes('sleep 299'))).toEqual([]);
  expect(processes.filter((p) => p.includes('sleep 300'))).toHaveLength(1);
});
