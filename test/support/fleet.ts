import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { createDockerRuntime, startAgent, type RunningAgent } from '@sandbox/agent';
import {
  loadAgentConfig,
  loadEdgeProxyConfig,
  loadGatewayConfig,
  type AgentConfig,
} from '@sandbox/config';
import { startEdgeProxy, type RunningEdgeProxy } from '@sandbox/edge-proxy';
import { startGateway, type RunningGateway } from '@sandbox/gateway';
import { createLogger, type Logger } from '@sandbox/logger';
import { requiredEnv } from './env';
import { removeNodeSandboxes, testAgentEnv } from './stack';

const BUCKET = 'fleet-workspaces';
const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** One agent of a fleet: stopped and started again on the same address. */
export interface FleetNode {
  readonly nodeId: string;
  readonly config: AgentConfig;
  /** Undefined while stopped. */
  agent: RunningAgent | undefined;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface TestFleet {
  /** The first gateway replica's URL. */
  url: string;
  gateways: RunningGateway[];
  /** An edge proxy for previews under `preview.test`, asking the last replica for routes. */
  edge: RunningEdgeProxy;
  nodes: FleetNode[];
  adminToken: string;
  internalToken: string;
  schema: string;
  /** A heartbeat now on every replica (what they would see within NODE_HEARTBEAT_MS). */
  tick(): Promise<void>;
  stop(): Promise<void>;
}

const random = (bytes = 6): string => randomBytes(bytes).toString('hex');

export interface FleetOptions {
  nodes?: number;
  replicas?: number;
  agentEnv?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
}

/** The gateways' settings: no node at first, and quick heartbeats, drains and webhooks. */
function fleetGatewayConfig(
  internalToken: string,
  adminToken: string,
  gatewayEnv: Record<string, string> | undefined,
): ReturnType<typeof loadGatewayConfig> {
  return loadGatewayConfig({
    GATEWAY_PORT: '0',
    DATABASE_URL: requiredEnv('TEST_DATABASE_URL'),
    REDIS_URL: requiredEnv('TEST_REDIS_URL'),
    AGENT_NODES: '',
    INTERNAL_TOKEN: internalToken,
    ADMIN_TOKEN: adminToken,
    PREVIEW_DOMAIN: 'preview.test',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    // Test receivers listen on loopback.
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    NODE_HEARTBEAT_MS: '300',
    NODE_DOWN_AFTER_MS: '1500',
    NODE_DRAIN_INTERVAL_MS: '300',
    ...gatewayEnv,
  });
}

/** One agent of the fleet, its own node, announcing itself to the gateways at `url`. */
function fleetNode(
  nodeId: string,
  {
    internalToken,
    s3Port,
    url,
    logger,
  }: { internalToken: string; s3Port: number; url: string; logger: Logger },
  agentEnv: Record<string, string> | undefined,
): FleetNode {
  let config = loadAgentConfig({
    ...testAgentEnv(nodeId, internalToken),
    SANDBOX_POOL: '0',
    BLOB_STORE: 's3',
    BLOB_STORE_S3_BUCKET: BUCKET,
    BLOB_STORE_S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
    BLOB_STORE_S3_FORCE_PATH_STYLE: 'true',
    AGENT_GATEWAY_URL: url,
    AGENT_ANNOUNCE_INTERVAL_S: '5',
    AGENT_MAX_SANDBOXES: '10',
    ...agentEnv,
  });
  const node: FleetNode = {
    nodeId,
    get config() {
      return config;
    },
    agent: undefined,
    async start() {
      node.agent = await startAgent({
        config,
        logger,
        runtime: createDockerRuntime({ config, logger, blobCredentials: S3_CREDENTIALS }),
      });
      // Restarted on the same ports (the registry keeps its address).
      const port = (address: string) => address.slice(address.lastIndexOf(':') + 1);
      config = {
        ...config,
        port: Number(port(node.agent.address)),
        previewPort: Number(port(node.agent.previewAddress)),
      };
    },
    async stop() {
      await node.agent?.stop();
      node.agent = undefined;
    },
  };
  return node;
}

/**
 * Agents on one Docker engine, each its own node (its id, containers, disks), with workspaces
 * of deep-sleeping sessions in one S3 store (s3rver), behind gateway replicas on one Postgres
 * schema and Redis. The gateways start with no node: every agent announces itself.
 */
export async function startFleet(options: FleetOptions = {}): Promise<TestFleet> {
  const schema = `t_${random()}`;
  const internalToken = random(16);
  const adminToken = random(16);
  const logger: Logger = createLogger({
    name: 'test',
    level: process.env.TEST_LOG_LEVEL ?? 'silent',
  });
  const s3Dir = await mkdtemp(join(tmpdir(), 'fleet-s3-'));
  const s3 = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory: s3Dir,
    silent: true,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const s3Port = (await s3.run()).port;

  const gatewayConfig = fleetGatewayConfig(internalToken, adminToken, options.gatewayEnv);
  const gateways: RunningGateway[] = [];
  for (let i = 0; i < (options.replicas ?? 2); i += 1) {
    gateways.push(await startGateway({ config: gatewayConfig, logger, schema }));
  }
  const url = gateways[0]?.url as string;

  const edge = await startEdgeProxy({
    config: loadEdgeProxyConfig({
      EDGE_PORT: '0',
      PREVIEW_DOMAIN: 'preview.test',
      GATEWAY_INTERNAL_URL: gateways.at(-1)?.url,
      INTERNAL_TOKEN: internalToken,
    }),
    logger,
  });

  const nodes: FleetNode[] = [];
  for (let i = 0; i < (options.nodes ?? 2); i += 1) {
    const node = fleetNode(
      `test-${random()}-${String.fromCharCode(97 + i)}`,
      { internalToken, s3Port, url, logger },
      options.agentEnv,
    );
    await node.start();
    nodes.push(node);
  }
  const fleet: TestFleet = {
    url,
    gateways,
    edge,
    nodes,
    adminToken,
    internalToken,
    schema,
    async tick() {
      for (const gateway of gateways) await gateway.fleet.agents.tick();
    },
    async stop() {
      await gateways[0]?.db
        .query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
        .catch(() => undefined);
      for (const gateway of gateways) await gateway.stop();
      for (const node of nodes) {
        await node.stop();
        await removeNodeSandboxes(node.nodeId);
      }
      await s3.close();
      await rm(s3Dir, { recursive: true, force: true });
    },
  };
  return fleet;
}
