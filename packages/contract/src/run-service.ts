import { createLogger, type Logger } from '@sandbox/logger';

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * The `main` of every service: loads its config, makes its logger, starts it, and stops it on
 * SIGINT or SIGTERM. A start that fails prints its message (never a stack with config values)
 * and exits 1.
 */
export function runService<C extends { logLevel: string }>(
  name: string,
  loadConfig: () => C,
  start: (config: C, logger: Logger) => Promise<Stoppable>,
): void {
  const main = async (): Promise<void> => {
    const config = loadConfig();
    const logger = createLogger({ name, level: config.logLevel });
    const service = await start(config, logger);
    const shutdown = (signal: string): void => {
      logger.info({ signal }, `${name} stopping`);
      service.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  };
  main().catch((err: unknown) => {
    console.error(`${name} failed to start:`, err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
