import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGatewayConfig } from '@sandbox/config';
import { startGateway, type RunningGateway } from '@sandbox/gateway';
import { createLogger } from '@sandbox/logger';
import { call, createAccountAt } from '../support/api';
import { requiredEnv } from '../support/env';
import { closedPort } from '../support/net';

/**
 * Postgres and Redis restarted under a running gateway: while one is down, requests answer 503
 * with Retry-After (never 500, never a hang); once it is back, they succeed again without a
 * restart of ours. Each store is a private instance of this test, on a port of its own.
 */
const adminToken = 'admin-token-for-this-test';
const logger = createLogger({ name: 'test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Kills a store's process and waits for its exit. */
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Polls `url` until its status is `status` (or the time is up); returns the last answer. */
async function until(url: string, key: string, status: number, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const started = Date.now();
    const answer = await call(url, { key });
    const took = Date.now() - started;
    if (answer.status === status || Date.now() > deadline) return { ...answer, took };
    await sleep(200);
  }
}

describe('Redis restarted', () => {
  let redis: ChildProcess | undefined;
  let gateway: RunningGateway;
  let port: number;
  const schema = `t_redis_restart_${Date.now()}`;
  const startRedis = () => {
    redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
  };

  beforeAll(async () => {
    port = await closedPort();
    startRedis();
    await sleep(300);
    gateway = await startGateway({
      config: loadGatewayConfig({
        GATEWAY_PORT: '0',
        DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
        REDIS_URL: `redis://127.0.0.1:${port}`,
        AGENT_NODES: `gone=127.0.0.1:${await closedPort()}`,
        ADMIN_TOKEN: adminToken,
      }),
      logger,
      schema,
    });
  });

  afterAll(async () => {
    await gateway?.db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await gateway?.stop();
    await stop(redis);
  });

  it('answers 503 while Redis is down and serves again once it is back', async () => {
    const { key } = await createAccountAt({ url: gateway.url, adminToken }, 'free');
    const sessions = `${gateway.url}/v1/sessions`;
    expect((await call(sessions, { key })).status).toBe(200);

    await stop(redis);
    const down = await until(sessions, key, 503, 10_000);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(down.took).toBeLessThan(5000);

    startRedis(); // empty: every cache stamp is gone, which must not serve stale records
    const back = await until(sessions, key, 200, 15_000);
    expect(back.status).toBe(200);
  });
});

/** A Postgres of the test's own in a temporary directory, started and stopped at will. */
class ThrowawayPostgres {
  readonly dataDir = mkdtempSync(join(tmpdir(), 'pg-restart-'));
  port = 0;
  private process: ChildProcess | undefined;

  /** Makes its cluster (owned by postgres when run as root) and starts it. */
  async init(): Promise<void> {
    this.port = await closedPort();
    chmodSync(this.dataDir, 0o700);
    spawnSync('chown', ['postgres:postgres', this.dataDir]);
    const [command, args] = this.asPostgres(`${PG_BIN}/initdb`, [
      '-D',
      this.dataDir,
      '-U',
      'sandbox',
      '--auth=trust',
      '--no-sync',
    ]);
    const made = spawnSync(command, args, { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`initdb failed: ${made.stderr}`);
    await this.start();
  }

  async start(): Promise<void> {
    const [command, args] = this.asPostgres(`${PG_BIN}/postgres`, [
      '-D',
      this.dataDir,
      '-p',
      String(this.port),
      '-k',
      this.dataDir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
    ]);
    this.process = spawn(command, args, { stdio: 'ignore' });
    for (let i = 0; i < 100; i += 1) {
      const probe = spawnSync(`${PG_BIN}/pg_isready`, ['-h', '127.0.0.1', '-p', String(this.port)]);
      if (probe.status === 0) return;
      await sleep(100);
    }
    throw new Error('the test Postgres did not start');
  }

  /** An immediate shutdown (its backends too), signalled to the postmaster itself. */
  async stop(): Promise<void> {
    const postgres = this.process;
    if (postgres === undefined || postgres.exitCode !== null) return;
    const exited = new Promise((resolve) => postgres.once('exit', resolve));
    const pidFile = readFileSync(join(this.dataDir, 'postmaster.pid'), 'utf8');
    process.kill(Number(pidFile.split('\n')[0]), 'SIGQUIT');
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    spawnSync('rm', ['-rf', this.dataDir]);
  }

  private asPostgres(command: string, args: string[]): [string, string[]] {
    return process.getuid?.() === 0
      ? ['runuser', ['-u', 'postgres', '--', command, ...args]]
      : [command, args];
  }
}

describe('Postgres restarted', () => {
  const postgres = new ThrowawayPostgres();
  let gateway: RunningGateway;

  beforeAll(async () => {
    await postgres.init();
    gateway = await startGateway({
      config: loadGatewayConfig({
        GATEWAY_PORT: '0',
        DATABASE_URL: `postgres://sandbox@127.0.0.1:${postgres.port}/postgres`,
        REDIS_URL: requiredEnv('TEST_REDIS_URL'),
        AGENT_NODES: `gone=127.0.0.1:${await closedPort()}`,
        ADMIN_TOKEN: adminToken,
      }),
      logger,
      schema: 'public',
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await postgres.remove();
  });

  it('answers 503 while Postgres is down and serves again once it is back', async () => {
    const { key } = await createAccountAt({ url: gateway.url, adminToken }, 'free');
    const sessions = `${gateway.url}/v1/sessions`;
    expect((await call(sessions, { key })).status).toBe(200);

    await postgres.stop();
    const down = await until(sessions, key, 503, 10_000);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ error: { code: 'service_unavailable' } });
    expect(down.took).toBeLessThan(5000);

    await postgres.start();
    const back = await until(sessions, key, 200, 15_000);
    expect(back.status).toBe(200);
  });
});
