import { loadGatewayConfig } from '@sandbox/config';
import { createLogger } from '@sandbox/logger';
import { startGateway } from './create-gateway';

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const logger = createLogger({ name: 'gateway', level: config.logLevel });
  const gateway = await startGateway({ config, logger });
  const shutdown = (signal: string): void => {
    logger.info({ signal }, 'gateway stopping');
    gateway.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  console.error('gateway failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
