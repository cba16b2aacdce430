import { SessionUse } from './session-use';

describe('SessionUse', () => {
  it('counts a session as used while a request of it runs and for a while after', async () => {
    const use = new SessionUse();
    expect(use.usedWithin('ses_1', 1000)).toBe(false);
    let finish!: () => void;
    const request = use.track('ses_1', () => new Promise<void>((resolve) => (finish = resolve)));
    expect(use.usedWithin('ses_1', 0)).toBe(true);
    expect(use.usedWithin('ses_2', 1000)).toBe(false);
    finish();
    await request;
    expect(use.usedWithin('ses_1', 1000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(use.usedWithin('ses_1', 10)).toBe(false);
  });

  it('tells whether a request started since a mark, even one that ended', async () => {
    const use = new SessionUse();
    const mark = use.mark('ses_1');
    expect(use.usedSince(mark)).toBe(false);
    await use.track('ses_1', () => Promise.resolve());
    expect(use.usedSince(mark)).toBe(true);
    expect(use.usedSince(use.mark('ses_1'))).toBe(false);
  });

  it('counts a request that failed, and forgets a session only when none runs', async () => {
    const use = new SessionUse();
    await expect(use.track('ses_1', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(use.usedWithin('ses_1', 1000)).toBe(true);
    use.forget('ses_1');
    expect(use.usedWithin('ses_1', 1000)).toBe(false);
    let finish!: () => void;
    const request = use.track('ses_1', () => new Promise<void>((resolve) => (finish = resolve)));
    use.forget('ses_1');
    expect(use.usedWithin('ses_1', 0)).toBe(true);
    finish();
    await request;
  });
});
