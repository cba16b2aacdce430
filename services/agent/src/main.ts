import { loadAgentConfig } from '@sandbox/config';
import { createLogger } from '@sandbox/logger';
import { startAgent } from './create-agent';
import { DockerRuntime } from './runtime/docker-runtime';

async function main(): Promise<void> {
  const config = loadAgentConfig();
  const logger = createLogger({ name: 'agent', level: config.logLevel });
  const runtime = new DockerRuntime({ config, logger });
  const agent = await startAgent({ config, logger, runtime });
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'agent stopping');
    agent.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  console.error('agent failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
