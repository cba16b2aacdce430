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
    stopOnSignals(process, service, { name, logger, exit: (code) => process.exit(code) });
  };
  main().catch((err: unknown) => {
    console.error(`${name} failed to start:`, err instanceof Error ? err.message : err);
    process.exit(1);
  });
}

/** What `stopOnSignals` listens to: a process, or a stand-in. */
export interface SignalSource {
  on(signal: 'SIGINT' | 'SIGTERM', listener: (signal: string) => void): unknown;
}

/**
 * Stops `service` at the first SIGINT or SIGTERM, then exits (0, or 1 if the stop failed).
 * Signals that come while it stops are ignored, not fatal: Ctrl-C reaches a service and its
 * supervisor at once, and the supervisor passes a SIGTERM on (scripts/lib/supervise.sh). With
 * a one-time handler the second signal killed the service in the middle of its stop, and the
 * agent left its warm pool's sandboxes behind.
 */
export function stopOnSignals(
  source: SignalSource,
  service: Stoppable,
  { name, logger, exit }: { name: string; logger: Logger; exit: (code: number) => void },
): void {
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) {
      logger.info({ signal }, `${name} is already stopping`);
      return;
    }
    stopping = true;
    logger.info({ signal }, `${name} stopping`);
    service.stop().then(
      () => exit(0),
      (err: unknown) => {
        logger.error({ err }, `${name} could not stop cleanly`);
        exit(1);
      },
    );
  };
  source.on('SIGINT', shutdown);
  source.on('SIGTERM', shutdown);
}
