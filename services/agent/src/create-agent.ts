import { createServer, type AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { Periodic, serveMetrics } from '@sandbox/contract';
import { blobStoreId, type AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { addAgentService } from './grpc/agent-service';
import { AGENT_SERVER_OPTIONS } from './grpc/server-options';
import { addStandardServices } from './grpc/standard-services';
import { AgentMetrics } from './node/agent-metrics';
import { announcer } from './node/announcer';
import { createPreviewServer } from './preview/preview-server';
import type { SandboxRuntime } from './runtime/sandbox-runtime';

export interface AgentDeps {
  config: AgentConfig;
  logger: Logger;
  runtime: SandboxRuntime;
}

export interface RunningAgent {
  /** The bound gRPC address, `host:port` (port 0 in config picks a free one). */
  readonly address: string;
  /** The bound preview proxy address, `host:port`. */
  readonly previewAddress: string;
  /** `host:port` of its `/metrics` listener (METRICS_PORT); absent without one. */
  readonly metricsAddress: string | undefined;
  stop(): Promise<void>;
}

export const AGENT_VERSION = '0.1.0';

/**
 * Serves `server` on our own listener, so that every gRPC socket has Nagle off (grpc-js's own
 * does not): a run's output is many small writes, each of which must leave at once.
 */
async function listenWithoutNagle(
  server: grpc.Server,
  config: AgentConfig,
): Promise<{ port: number; close: () => Promise<void> }> {
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const listener = createServer({ noDelay: true }, (socket) => injector.injectConnection(socket));
  const port = await new Promise<number>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(config.port, config.host, () =>
      resolve((listener.address() as AddressInfo).port),
    );
  });
  return {
    port,
    async close() {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          injector.destroy();
          server.forceShutdown();
        }, 5000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
        injector.drain(5000);
      });
      injector.destroy();
      await closed;
    },
  };
}

/** The agent's loops: the reconciler, and the announcer where a gateway is named. */
function startLoops(
  config: AgentConfig,
  logger: Logger,
  runtime: SandboxRuntime,
  address: string,
): { stop: () => Promise<void> } {
  // At start (after a crash or a reboot) and then periodically: sandboxes back to their state.
  const reconciler = new Periodic(
    async () => runtime.reconcile?.(),
    config.reconcileIntervalS * 1000,
    logger,
    'reconcile failed',
  );
  void reconciler.runOnce();
  reconciler.start();

  // Joins the gateways' node registry (when a gateway is named; else an operator adds it).
  const announcing =
    config.gatewayUrl === undefined
      ? undefined
      : new Periodic(
          announcer(
            config.gatewayUrl,
            config.internalToken,
            { nodeId: config.nodeId, address, version: AGENT_VERSION },
            logger,
          ),
          config.announceIntervalS * 1000,
          logger,
          'announcing the node failed',
        );
  void announcing?.runOnce();
  announcing?.start();

  return {
    async stop() {
      await announcing?.stop();
      await reconciler.stop();
    },
  };
}

/** Prepares the runtime and serves the Agent gRPC service. */
export async function startAgent({ config, logger, runtime }: AgentDeps): Promise<RunningAgent> {
  // Started first: an engine wedged before the agent starts holds `prepare` up, and says so.
  const engine = runtime.engine?.();
  engine?.start();
  await runtime.prepare();
  const preview = createPreviewServer({ runtime, logger, internalToken: config.internalToken });
  await new Promise<void>((resolve, reject) => {
    preview.once('error', reject);
    preview.listen(config.previewPort, config.host, resolve);
  });
  const previewAddress = `${config.advertiseHost}:${(preview.address() as AddressInfo).port}`;
  const server = new grpc.Server(AGENT_SERVER_OPTIONS);
  const metrics = new AgentMetrics({
    sandboxes: () => runtime.count(),
    pool: () => runtime.poolStatus?.() ?? [],
    poolRefill: () => runtime.poolRefill?.(),
    coldStarts: () => runtime.coldStartStats?.(),
    runStarts: () => runtime.runStartStats?.(),
    engine: () => engine?.status(),
    maxSandboxes: config.maxSandboxes,
  });
  addAgentService(
    server,
    {
      runtime,
      logger,
      nodeId: config.nodeId,
      version: AGENT_VERSION,
      previewAddress,
      internalToken: config.internalToken,
      capacity: {
        maxSandboxes: config.maxSandboxes,
        memoryReserveBytes: config.memoryReserveBytes,
      },
      blobStore: blobStoreId(config),
    },
    metrics,
  );
  const health = addStandardServices(server);
  engine?.onChange((wedged) => health.engineWedged(wedged));
  const grpcListener = await listenWithoutNagle(server, config);
  const address = `${config.advertiseHost}:${grpcListener.port}`;
  const metricsServer =
    config.metrics.port === undefined
      ? undefined
      : await serveMetrics(metrics.registry, { ...config.metrics, port: config.metrics.port });
  logger.info({ address, previewAddress, nodeId: config.nodeId }, 'agent listening');

  const loops = startLoops(config, logger, runtime, address);

  return {
    address,
    previewAddress,
    metricsAddress: metricsServer?.address,
    async stop() {
      health.stopping();
      engine?.stop();
      await metricsServer?.stop();
      await loops.stop();
      await runtime.stop?.();
      await new Promise<void>((resolve) => {
        preview.close(() => resolve());
        preview.closeAllConnections();
      });
      await grpcListener.close();
    },
  };
}
