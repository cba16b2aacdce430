import { loadEdgeProxyConfig } from '@sandbox/config';
import { createLogger } from '@sandbox/logger';
import { startEdgeProxy } from './create-edge-proxy';

async function main(): Promise<void> {
  const config = loadEdgeProxyConfig();
  const logger = createLogger({ name: 'edge-proxy', level: config.logLevel });
  const edge = await startEdgeProxy({ config, logger });
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'edge proxy stopping');
    edge.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  console.error('edge proxy failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
