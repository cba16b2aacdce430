import { SessionLocks, type SessionLock } from './session-locks';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SessionLocks', () => {
  it('runs the transitions of one session one after the other, in order', async () => {
    const locks = new SessionLocks();
    const events: string[] = [];
    const step = (name: string) => async () => {
      events.push(`${name} start`);
      await tick();
      await tick();
      events.push(`${name} end`);
    };
    await Promise.all([
      locks.withLock('a', step('first')),
      locks.withLock('a', step('second')),
      locks.withLock('a', step('third')),
    ]);
    expect(events).toEqual([
      'first start',
      'first end',
      'second start',
      'second end',
      'third start',
      'third end',
    ]);
  });

  it('lets different sessions run at the same time', async () => {
    const locks = new SessionLocks();
    const events: string[] = [];
    let releaseA!: () => void;
    const a = locks.withLock('a', async () => {
      events.push('a start');
      await new Promise<void>((resolve) => (releaseA = resolve));
      events.push('a end');
    });
    await tick();
    await locks.withLock('b', () => {
      events.push('b');
      return Promise.resolve();
    });
    releaseA();
    await a;
    expect(events).toEqual(['a start', 'b', 'a end']);
  });

  it('goes on after a transition that failed, and passes its error on', async () => {
    const locks = new SessionLocks();
    const failed = locks.withLock('a', () => Promise.reject(new Error('boom')));
    const next = locks.withLock('a', () => Promise.resolve('ran'));
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
  });

  it('hands out a lock that covers only its session, and only while held', async () => {
    const locks = new SessionLocks();
    let kept: SessionLock | undefined;
    await locks.withLock('a', (lock) => {
      expect(() => lock.check('a')).not.toThrow();
      expect(() => lock.check('b')).toThrow();
      kept = lock;
      return Promise.resolve();
    });
    expect(() => kept!.check('a')).toThrow();
  });
});

describe('SessionLocks: work handed over for later', () => {
  it('answers before the work handed over for later, which the next transition waits for', async () => {
    const locks = new SessionLocks();
    const events: string[] = [];
    let finish!: () => void;
    const answer = await locks.withLockAnsweringFirst('a', (lock, later) => {
      later(async () => {
        lock.check('a'); // still held
        await new Promise<void>((resolve) => (finish = resolve));
        events.push('later done');
      });
      return Promise.resolve('answered');
    });
    expect(answer).toBe('answered');
    const next = locks.withLock('a', () => {
      events.push('next');
      return Promise.resolve();
    });
    await tick();
    expect(events).toEqual([]);
    finish();
    await next;
    expect(events).toEqual(['later done', 'next']);
  });

  it('says a session is finishing from its answer until the work handed over has run', async () => {
    const locks = new SessionLocks();
    let finish!: () => void;
    await locks.withLockAnsweringFirst('a', (_lock, later) => {
      later(() => new Promise<void>((resolve) => (finish = resolve)));
      return Promise.resolve();
    });
    expect(locks.finishing('a')).toBe(true);
    expect(locks.finishing('b')).toBe(false);
    finish();
    await locks.withLock('a', () => Promise.resolve());
    expect(locks.finishing('a')).toBe(false);
    // Nothing handed over: never finishing.
    await locks.withLockAnsweringFirst('a', () => Promise.resolve());
    expect(locks.finishing('a')).toBe(false);
  });

  it('still runs the work handed over when the answer is a failure, and drops its rejection', async () => {
    const locks = new SessionLocks();
    let cleaned = false;
    await expect(
      locks.withLockAnsweringFirst('a', (_lock, later) => {
        later(() => {
          cleaned = true;
          return Promise.reject(new Error('cleanup failed'));
        });
        return Promise.reject(new Error('no'));
      }),
    ).rejects.toThrow('no');
    await locks.withLock('a', () => Promise.resolve());
    expect(cleaned).toBe(true);
  });
});
