import { RequestLoad } from './request-load';

describe('RequestLoad', () => {
  it('is busy while a request is served, and quiet only once none was for the time asked', async () => {
    let now = 1000;
    const load = new RequestLoad(() => now);
    expect(load.quietFor(500)).toBe(true);
    let finish: () => void = () => undefined;
    const served = load.track(() => new Promise<void>((resolve) => (finish = resolve)));
    expect(load.busy()).toBe(true);
    now += 2000;
    expect(load.quietFor(500)).toBe(false);
    finish();
    await served;
    expect(load.busy()).toBe(false);
    expect(load.quietFor(500)).toBe(false); // a gap between two requests
    now += 499;
    expect(load.quietFor(500)).toBe(false);
    now += 1;
    expect(load.quietFor(500)).toBe(true);
  });
});
