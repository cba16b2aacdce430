import type { Logger } from '@sandbox/logger';

/**
 * Runs `pass` every `intervalMs`, never two at once (a slow pass delays the next), logging
 * failures. `stop` waits for the pass under way.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
    private readonly failure: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  /** One pass now, unless one is under way (then that one). */
  runOnce(): Promise<void> {
    this.running ??= this.pass()
      .then(() => undefined)
      .catch((err: unknown) => this.logger.error({ err }, this.failure))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
