import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { createDockerRuntime, startAgent, type RunningAgent } from '@sandbox/agent';
import { loadAgentConfig } from '@sandbox/config';
import { createLogger } from '@sandbox/logger';
import { INTERNAL_TOKEN_METADATA_KEY } from '@sandbox/contract';
import { loadAgentProto, type AgentClient } from '@sandbox/proto';
import { removeNodeSandboxes, testAgentEnv } from '../support/stack';

const nodeId = `test-grpc-${Date.now()}`;
const token = 'agent-test-token';
const sessionId = `ses_${randomBytes(12).toString('hex')}`;
let agent: RunningAgent;
let client: AgentClient;

const logger = createLogger({ name: 'test', level: 'silent' });
// No warm pool: these calls make their sandbox themselves (the agent's default would fill 16).
const config = loadAgentConfig({ ...testAgentEnv(nodeId, token), SANDBOX_POOL: '0' });

function metadata(value?: string): grpc.Metadata {
  const md = new grpc.Metadata();
  if (value !== undefined) md.set(INTERNAL_TOKEN_METADATA_KEY, `Bearer ${value}`);
  return md;
}

function nodeInfo(md: grpc.Metadata): Promise<{ nodeId: string; previewAddress: string }> {
  return new Promise((resolve, reject) => {
    client.getNodeInfo({}, md, (err, res) =>
      err || !res ? reject(err ?? new Error('empty')) : resolve(res),
    );
  });
}

beforeAll(async () => {
  agent = await startAgent({ config, logger, runtime: createDockerRuntime({ config, logger }) });
  const Agent = loadAgentProto().agent.v1.Agent;
  client = new Agent(agent.address, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client?.close();
  await agent?.stop();
  await removeNodeSandboxes(nodeId);
});

describe('agent gRPC service', () => {
  it('refuses calls without the internal token', async () => {
    await expect(nodeInfo(metadata())).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
    await expect(nodeInfo(metadata('wrong'))).rejects.toMatchObject({
      code: grpc.status.UNAUTHENTICATED,
    });
  });

  it('answers with the token, and finds its sandboxes again after a restart', async () => {
    expect(await nodeInfo(metadata(token))).toMatchObject({
      nodeId,
      previewAddress: agent.previewAddress,
    });
    const create = () =>
      new Promise<{ containerId: string; status: string }>((resolve, reject) => {
        client.createSandbox(
          {
            sessionId,
            accountId: 'acc_x',
            limits: { memoryMb: 256, cpu: 0.5, diskMb: 1024, pids: 64 },
          },
          metadata(token),
          (err, res) => (err || !res ? reject(err ?? new Error('empty')) : resolve(res)),
        );
      });
    const first = await create();
    expect(first.status).toBe('running');

    await agent.stop();
    agent = await startAgent({
      config,
      logger,
      runtime: createDockerRuntime({ config, logger }),
    });
    client.close();
    client = new (loadAgentProto().agent.v1.Agent)(
      agent.address,
      grpc.credentials.createInsecure(),
    );
    const again = await create();
    expect(again.containerId).toBe(first.containerId);
  });
});
