/**
 * Runs tasks one at a time per key, in the order they came; tasks of different keys overlap.
 * A failed task does not stop the ones after it.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const result = before.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // The last task of a key takes its entry with it: keys come and go.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or waiting. */
  size(): number {
    return this.tails.size;
  }
}
