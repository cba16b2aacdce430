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
    this.timer = setInterval(() => {
      this.running ??= this.pass()
        .then(() => undefined)
        .catch((err: unknown) => this.logger.error({ err }, this.failure))
        .finally(() => {
          this.running = undefined;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
