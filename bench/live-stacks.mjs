// The bench's stacks that are up, so that a ^C stops them rather than leaving their agents,
// gateways and pools running (the agent and the gateway are in process groups of their own:
// the terminal's ^C reaches the bench alone, which stops them in order).

/**
 * Stacks started and not yet stopped. On the first SIGINT or SIGTERM, every one is stopped
 * (its sessions and pool removed, its processes ended), then `exit(130)`; a second signal
 * exits at once, leaving them running.
 */
export class LiveStacks {
  #stacks = new Set();
  #stopping;

  constructor({ exit = (code) => process.exit(code), log = console.error } = {}) {
    this.exit = exit;
    this.log = log;
  }

  /**
   * Keeps `stack` until its `stop()`, which it returns wrapped to forget it and to stop once:
   * the bench's own `finally` may call it while a signal's stop is under way.
   */
  add(stack) {
    this.#stacks.add(stack);
    const stop = stack.stop;
    let stopped;
    stack.stop = () => {
      this.#stacks.delete(stack);
      stopped ??= stop();
      return stopped;
    };
    return stack;
  }

  get size() {
    return this.#stacks.size;
  }

  /** What a signal does (see the class); resolves once the stacks stopped. */
  onSignal(signal) {
    if (this.#stopping !== undefined) {
      this.log(`bench: ${signal} again: leaving ${this.#stacks.size} stack(s) running`);
      this.exit(130);
      return this.#stopping;
    }
    this.log(`bench: ${signal}: stopping ${this.#stacks.size} stack(s) (again to leave them)`);
    this.#stopping = Promise.allSettled([...this.#stacks].map((stack) => stack.stop())).then(
      (results) => {
        for (const { reason } of results.filter((r) => r.status === 'rejected')) {
          this.log(`bench: a stack did not stop: ${reason}`);
        }
        this.exit(130);
      },
    );
    return this.#stopping;
  }

  /** Stops the stacks on this process's SIGINT and SIGTERM. */
  listen() {
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.on(signal, () => void this.onSignal(signal));
    }
    return this;
  }
}
