import { PassThrough } from 'node:stream';
import { createLogger } from '@sandbox/logger';
import { FakeContainers } from '../lifecycle/fake-containers';
import { CachedContainers } from './cached-containers';

const logger = createLogger({ name: 'test', level: 'silent' });
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A cache over fake containers, with an event stream the test writes to. */
async function cached(): Promise<{
  cache: CachedContainers;
  inner: FakeContainers;
  events: PassThrough;
  finds: () => number;
  open: () => number;
}> {
  const inner = new FakeContainers([]);
  let finds = 0;
  const find = inner.find.bind(inner);
  inner.find = (name) => {
    finds += 1;
    return find(name);
  };
  let events = new PassThrough();
  let opened = 0;
  const cache = new CachedContainers(
    inner,
    () => {
      opened += 1;
      events = new PassThrough();
      return Promise.resolve(events);
    },
    logger,
  );
  await cache.watch();
  return {
    cache,
    inner,
    get events() {
      return events;
    },
    finds: () => finds,
    open: () => opened,
  };
}

/** After a reconnect delay: the stream opened a second time, caching again; then unwatched. */
async function reconnected(t: Awaited<ReturnType<typeof cached>>): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 400));
  expect(t.open()).toBe(2);
  expect(t.cache.caching).toBe(true);
  t.cache.unwatch();
}

const event = (action: string, id: string, name: string) =>
  `${JSON.stringify({ Type: 'container', Action: action, Actor: { ID: id, Attributes: { name } } })}\n`;

describe('CachedContainers', () => {
  it('answers a repeated lookup from memory while the event stream is open', async () => {
    const t = await cached();
    const state = t.inner.put('ses_1', 'running');
    expect((await t.cache.find('sbx-ses_1'))?.id).toBe(state.id);
    expect((await t.cache.find('sbx-ses_1'))?.id).toBe(state.id);
    expect(t.finds()).toBe(1);
    t.cache.unwatch();
  });

  it('hands out copies: a caller changing what it found changes nothing kept', async () => {
    const t = await cached();
    t.inner.put('ses_1', 'running');
    const first = (await t.cache.find('sbx-ses_1'))!;
    first.labels['changed'] = 'yes';
    first.addresses['net'] = '10.9.9.9';
    first.running = false;
    const second = (await t.cache.find('sbx-ses_1'))!;
    expect(t.finds()).toBe(1);
    expect(second.labels['changed']).toBeUndefined();
    expect(second.addresses['net']).toBeUndefined();
    expect(second.running).toBe(true);
    second.labels['again'] = 'yes';
    expect((await t.cache.find('sbx-ses_1'))!.labels['again']).toBeUndefined();
    t.cache.unwatch();
  });

  it('forgets a container Docker reports changed (it died behind our back)', async () => {
    const t = await cached();
    const state = t.inner.put('ses_1', 'running');
    await t.cache.find('sbx-ses_1');
    t.inner.byName.get('sbx-ses_1')!.state.running = false;
    t.events.write(event('exec_start', state.id, 'sbx-ses_1')); // not a state change
    await tick();
    expect((await t.cache.find('sbx-ses_1'))?.running).toBe(true);
    t.events.write(event('die', state.id, 'sbx-ses_1'));
    await tick();
    expect((await t.cache.find('sbx-ses_1'))?.running).toBe(false);
    t.cache.unwatch();
  });

  it("forgets what the agent's own changes touch, by name and by id", async () => {
    const t = await cached();
    const state = t.inner.put('ses_1', 'running');
    await t.cache.find('sbx-ses_1');
    await t.cache.pause(state.id);
    expect((await t.cache.find('sbx-ses_1'))?.paused).toBe(true);
    await t.cache.rename(state.id, 'sbx-ses_2');
    expect(await t.cache.find('sbx-ses_1')).toBeUndefined();
    expect((await t.cache.find('sbx-ses_2'))?.id).toBe(state.id);
    await t.cache.remove('sbx-ses_2');
    expect(await t.cache.find('sbx-ses_2')).toBeUndefined();
    t.cache.unwatch();
  });

  it('does not keep what a lookup read while a change happened', async () => {
    const t = await cached();
    const state = t.inner.put('ses_1', 'running');
    let release!: () => void;
    const find = t.inner.find.bind(t.inner);
    t.inner.find = async (name) => {
      const before = await find(name); // read before the change...
      await new Promise<void>((resolve) => (release = resolve));
      return before; // ...answered after it
    };
    const racing = t.cache.find('sbx-ses_1');
    await tick();
    t.inner.byName.get('sbx-ses_1')!.state.running = false;
    t.events.write(event('die', state.id, 'sbx-ses_1'));
    await tick();
    release();
    expect((await racing)?.running).toBe(true);
    t.inner.find = find;
    expect((await t.cache.find('sbx-ses_1'))?.running).toBe(false);
    t.cache.unwatch();
  });
});

describe('CachedContainers without its event stream', () => {
  it('asks Docker every time while the event stream is down, and reconnects', async () => {
    const t = await cached();
    t.inner.put('ses_1', 'running');
    await t.cache.find('sbx-ses_1');
    t.events.end();
    await tick();
    expect(t.cache.caching).toBe(false);
    await t.cache.find('sbx-ses_1');
    await t.cache.find('sbx-ses_1');
    expect(t.finds()).toBe(3);
    await reconnected(t);
  });

  it('survives its event stream failing (dockerd going away aborts it), and reconnects', async () => {
    const t = await cached();
    t.inner.put('ses_1', 'running');
    await t.cache.find('sbx-ses_1');
    // An aborted HTTP response errors its stream: nothing must throw (an uncaught error would
    // end the agent).
    t.events.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    await tick();
    expect(t.cache.caching).toBe(false);
    await reconnected(t);
  });

  it('tells who listens of containers that died or were removed', async () => {
    const t = await cached();
    const ended: string[] = [];
    t.cache.onEnded((id) => ended.push(id));
    t.events.write(event('die', 'aaa', 'sbx-ses_1'));
    t.events.write(event('start', 'bbb', 'sbx-ses_2'));
    t.events.write(event('destroy', 'ccc', 'sbx-ses_3'));
    await tick();
    expect(ended).toEqual(['aaa', 'ccc']);
    t.cache.unwatch();
  });

  it('tells who listens when the stream is back after a loss, not when it first opens', async () => {
    const t = await cached();
    let resumed = 0;
    t.cache.onResumed(() => (resumed += 1));
    await tick();
    expect(resumed).toBe(0);
    t.events.end();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(t.open()).toBe(2);
    expect(resumed).toBe(1);
    t.cache.unwatch();
  });
});
