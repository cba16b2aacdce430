/**
 * A value that is slow to read (Docker's container list), answered from the last reading:
 * once one reading is known, `get` never waits; a reading older than `freshMs` starts one new
 * reading in the background (never two at once). Only the first `get` waits for Docker.
 *
 * The node's heartbeat reads its sandbox count this way: a heartbeat must answer while
 * dockerd is busy with a burst of creates (issue 39), and a count a second or two old serves
 * placement as well as a fresh one.
 */
export class LastKnown<T> {
  private value: { at: number; value: T } | undefined;
  private reading: Promise<T> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly freshMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<T> {
    return this.getAged().then(({ value }) => value);
  }

  /** The value, and how long ago its reading began (what it counts may have changed since). */
  async getAged(): Promise<{ value: T; ageMs: number }> {
    const known = this.value;
    if (known === undefined) {
      const startedAt = this.now();
      const value = await this.refresh();
      return { value, ageMs: this.now() - (this.value?.at ?? startedAt) };
    }
    if (this.now() - known.at >= this.freshMs) void this.refresh().catch(() => undefined);
    return { value: known.value, ageMs: this.now() - known.at };
  }

  private refresh(): Promise<T> {
    this.reading ??= (async () => {
      try {
        const startedAt = this.now();
        const value = await this.read();
        this.value = { at: startedAt, value };
        return value;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }
}
