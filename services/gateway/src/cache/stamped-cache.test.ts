import { LocalInvalidations, MAX_CACHED_MS } from './invalidations';
import { StampedCache } from './stamped-cache';

describe('StampedCache', () => {
  it('gives back what was read while the stamps are unchanged, and nothing after a bump', async () => {
    const invalidations = new LocalInvalidations();
    const cache = new StampedCache<string>(invalidations, 10);
    const read = await cache.readStamps(['k']);
    cache.keep('a', 'value', read);
    expect(cache.lookup('a', await cache.readStamps(['k']))).toBe('value');
    await invalidations.bump(['k']);
    expect(cache.lookup('a', await cache.readStamps(['k']))).toBeUndefined();
  });

  it('does not keep a value read under stamps a bump made stale meanwhile', async () => {
    const invalidations = new LocalInvalidations();
    const cache = new StampedCache<string>(invalidations, 10);
    const read = await cache.readStamps(['k']);
    await invalidations.bump(['k']); // a writer commits and bumps while the reader reads
    cache.keep('a', 'maybe old', read);
    expect(cache.lookup('a', await cache.readStamps(['k']))).toBeUndefined();
  });

  it('keeps nothing when the stamps could not be read', async () => {
    const cache = new StampedCache<string>(new LocalInvalidations(), 10);
    cache.keep('a', 'value', { stamps: undefined, generation: 0 });
    expect(cache.lookup('a', await cache.readStamps([]))).toBeUndefined();
    cache.keep('b', 'value', await cache.readStamps([]));
    expect(cache.lookup('b', { stamps: undefined, generation: 0 })).toBeUndefined();
  });

  it('starts over on a reset, and drops a read begun before it', async () => {
    const invalidations = new LocalInvalidations();
    let reset = (): void => undefined;
    invalidations.onReset = (listener) => {
      reset = listener;
    };
    const cache = new StampedCache<string>(invalidations, 10);
    cache.keep('a', 'value', await cache.readStamps(['k']));
    const before = await cache.readStamps(['k']);
    reset();
    expect(cache.lookup('a', await cache.readStamps(['k']))).toBeUndefined();
    cache.keep('b', 'read before the reset', before);
    expect(cache.lookup('b', await cache.readStamps(['k']))).toBeUndefined();
  });

  it('keeps an entry no longer than MAX_CACHED_MS, and at most maxEntries', async () => {
    let now = 0;
    const cache = new StampedCache<string>(new LocalInvalidations(), 2, () => now);
    const read = await cache.readStamps(['k']);
    cache.keep('a', 'a', read);
    cache.keep('b', 'b', read);
    cache.keep('c', 'c', read);
    expect(cache.lookup('a', read)).toBeUndefined();
    expect(cache.lookup('c', read)).toBe('c');
    now = MAX_CACHED_MS;
    expect(cache.lookup('c', read)).toBeUndefined();
  });

  it('holds an entry with its stamps for a check made elsewhere, which lookup then confirms', async () => {
    const invalidations = new LocalInvalidations();
    const cache = new StampedCache<string>(invalidations, 10);
    expect(cache.held('a')).toBeUndefined();
    cache.keep('a', 'value', await cache.readStamps(['k']));
    const held = cache.held('a')!;
    expect(held).toEqual({ value: 'value', stamps: [null], generation: 0 });
    expect(cache.lookup('a', { stamps: [null], generation: held.generation })).toBe('value');
    expect(cache.lookup('a', { stamps: ['changed'], generation: held.generation })).toBeUndefined();
    cache.clear();
    expect(cache.held('a')).toBeUndefined();
  });

  it('holds nothing past MAX_CACHED_MS', async () => {
    let now = 0;
    const cache = new StampedCache<string>(new LocalInvalidations(), 10, () => now);
    cache.keep('a', 'value', await cache.readStamps(['k']));
    now = MAX_CACHED_MS;
    expect(cache.held('a')).toBeUndefined();
  });
});
