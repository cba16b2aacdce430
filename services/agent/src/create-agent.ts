import * as grpc from '@grpc/grpc-js';
import type { AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { loadAgentProto } from '@sandbox/proto';
import { createAgentHandlers } from './grpc/agent-service';
import type { SandboxRuntime } from './runtime/sandbox-runtime';

export interface AgentDeps {
  config: AgentConfig;
  logger: Logger;
  runtime: SandboxRuntime;
}

export interface RunningAgent {
  /** The bound address, `host:port` (port 0 in config picks a free one). */
  readonly address: string;
  stop(): Promise<void>;
}

export const AGENT_VERSION = '0.1.0';

/** Prepares the runtime and serves the Agent gRPC service. */
export async function startAgent({ config, logger, runtime }: AgentDeps): Promise<RunningAgent> {
  await runtime.prepare();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 128 * 1024 * 1024 });
  server.addService(
    loadAgentProto().agent.v1.Agent.service,
    createAgentHandlers({
      runtime,
      logger,
      nodeId: config.nodeId,
      version: AGENT_VERSION,
      internalToken: config.internalToken,
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      `${config.host}:${config.port}`,
      grpc.ServerCredentials.createInsecure(),
      (err, boundPort) => (err ? reject(err) : resolve(boundPort)),
    );
  });
  const address = `${config.host}:${port}`;
  logger.info({ address, nodeId: config.nodeId }, 'agent listening');
  return {
    address,
    stop: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.forceShutdown(), 5000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
