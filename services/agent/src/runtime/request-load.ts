/** How many requests for sandboxes' data (runs, files, kills) the runtime is serving now. */
export class RequestLoad {
  private inFlight = 0;

  busy(): boolean {
    return this.inFlight > 0;
  }

  async track<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
    }
  }
}
