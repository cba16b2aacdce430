import { RunSlots } from './run-slots';

describe('RunSlots', () => {
  it("refuses a session's run past its limit with a 429 that says so, and frees slots as runs end", async () => {
    const slots = new RunSlots(2);
    const ends: Array<() => void> = [];
    const run = () => new Promise<void>((resolve) => ends.push(resolve));
    const first = slots.within('ses_a', run);
    const second = slots.within('ses_a', run);
    await expect(slots.within('ses_a', run)).rejects.toMatchObject({
      code: 'rate_limit_exceeded',
      retryAfter: 1,
      details: { limit: 2, scope: 'session_runs' },
    });
    // Another session has slots of its own.
    const other = slots.within('ses_b', () => Promise.resolve('b'));
    await expect(other).resolves.toBe('b');
    ends.shift()?.();
    await first;
    const third = slots.within('ses_a', () => Promise.reject(new Error('failed run')));
    await expect(third).rejects.toThrow('failed run');
    // A failed run frees its slot too.
    const fourth = slots.within('ses_a', () => Promise.resolve(4));
    await expect(fourth).resolves.toBe(4);
    ends.shift()?.();
    await second;
  });
});
