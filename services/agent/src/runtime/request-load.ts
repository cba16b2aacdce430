/** How many requests for sandboxes' data (runs, files, kills) the runtime is serving now. */
export class RequestLoad {
  private inFlight = 0;
  /** When the last request began or ended (ms, monotonic). */
  private lastActive = -Infinity;

  constructor(private readonly now: () => number = () => performance.now()) {}

  busy(): boolean {
    return this.inFlight > 0;
  }

  /** Whether no request has been served for `ms`: a pause, not a gap between two requests. */
  quietFor(ms: number): boolean {
    return this.inFlight === 0 && this.now() - this.lastActive >= ms;
  }

  async track<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    this.lastActive = this.now();
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
      this.lastActive = this.now();
    }
  }
}
