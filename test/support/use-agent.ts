import * as grpc from '@grpc/grpc-js';
import { createDockerRuntime, startAgent, type RunningAgent } from '@sandbox/agent';
import { loadAgentConfig } from '@sandbox/config';
import { createLogger } from '@sandbox/logger';
import { loadAgentProto, type AgentClient } from '@sandbox/proto';
import { removeNodeSandboxes, testAgentEnv } from './stack';

export interface AgentFixture {
  readonly nodeId: string;
  /** The internal token its calls need. */
  readonly token: string;
  readonly agent: RunningAgent;
  /** A gRPC client of the agent (a new one after `restart`). */
  readonly client: AgentClient;
  /** Stops the agent and starts it again on the same node (its sandboxes stay). */
  restart(): Promise<void>;
}

/**
 * One agent of its own, on the test agent's environment (and its runtime: ./scripts/test runs
 * such files on gVisor too) with no warm pool (its calls make their sandboxes themselves),
 * started before the tests of a file with a gRPC client; stopped after the last, its
 * sandboxes removed.
 */
export function useAgent(name: string): AgentFixture {
  const nodeId = `test-${name}-${Date.now()}`;
  const token = `agent-${name}-token`;
  const logger = createLogger({ name: 'test', level: 'silent' });
  const config = loadAgentConfig({ ...testAgentEnv(nodeId, token), SANDBOX_POOL: '0' });
  let agent: RunningAgent | undefined;
  let client: AgentClient | undefined;
  const start = async () => {
    agent = await startAgent({ config, logger, runtime: createDockerRuntime({ config, logger }) });
    client = new (loadAgentProto().agent.v1.Agent)(
      agent.address,
      grpc.credentials.createInsecure(),
    );
  };
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the agent starts in beforeAll');
    return value;
  };
  beforeAll(start);
  afterAll(async () => {
    client?.close();
    await agent?.stop();
    await removeNodeSandboxes(nodeId);
  });
  return {
    nodeId,
    token,
    get agent() {
      return ready(agent);
    },
    get client() {
      return ready(client);
    },
    async restart() {
      await ready(agent).stop();
      ready(client).close();
      await start();
    },
  };
}
