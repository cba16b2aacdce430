import { KeyedQueue } from './keyed-queue';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A promise with its resolver, to hold a task open. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('KeyedQueue', () => {
  it('runs the tasks of a key in order, past a failure, and forgets idle keys', async () => {
    const queue = new KeyedQueue();
    const order: string[] = [];
    const first = gate();
    const a = queue.run('n', async () => {
      await first.promise;
      order.push('a');
      throw new Error('a failed');
    });
    const b = queue.run('n', () => {
      order.push('b');
      return Promise.resolve('b');
    });
    const c = queue.run('m', () => {
      order.push('c');
      return Promise.resolve('c');
    });
    await tick();
    expect(order).toEqual(['c']);
    expect(queue.size()).toBe(1);
    first.open();

    await expect(a).rejects.toThrow('a failed');
    expect(await b).toBe('b');
    expect(await c).toBe('c');
    expect(order).toEqual(['c', 'a', 'b']);
    await tick();
    expect(queue.size()).toBe(0);
  });
});
