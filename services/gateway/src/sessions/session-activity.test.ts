import { createLogger } from '@sandbox/logger';
import { AppError } from '@sandbox/errors';
import { LocalInvalidations } from '../cache/invalidations';
import { DEFER_MARGIN_MS, SessionActivity } from './session-activity';
import type { SessionRecord } from './session-record';
import { sessionStamp, type SessionStore } from './session-store';

/** Shorter than MAX_CACHED_MS, so that it is the deadline, not the age, that sends a touch. */
const IDLE_MS = 30_000;
const logger = createLogger({ name: 'test', level: 'silent' });
const SESSION_ID = 'ses_' + 'a'.repeat(24);

function record(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: SESSION_ID,
    accountId: 'acc_1',
    nodeId: 'node-a',
    state: 'active',
    metadata: {},
    resourceLimits: { memory: 512, cpu: 0.25, disk: 1024 },
    createdAt: new Date(0),
    expiresAt: new Date(3_600_000),
    lastActiveAt: new Date(0),
    sleepFilesCount: null,
    previewPrivate: false,
    ...overrides,
  } as SessionRecord;
}

function setUp(current: () => SessionRecord) {
  let now = 1000;
  const touches: string[] = [];
  const kept: string[] = [];
  const written: Array<Map<string, Date>> = [];
  let failWrites = false;
  const store = {
    touch: (accountId: string, id: string) => {
      touches.push(id);
      const session = current();
      if (accountId !== session.accountId) {
        return Promise.reject(new AppError('session_not_found', 'Session not found'));
      }
      return Promise.resolve({ ...session, lastActiveAt: new Date(now) });
    },
    keepActive: (id: string) => {
      kept.push(id);
      return Promise.resolve();
    },
    recordActivity: (batch: Map<string, Date>) => {
      if (failWrites) return Promise.reject(new Error('database away'));
      written.push(new Map(batch));
      return Promise.resolve();
    },
  } as unknown as SessionStore;
  const invalidations = new LocalInvalidations();
  const activity = new SessionActivity(store, invalidations, IDLE_MS, logger, () => now);
  return {
    activity,
    invalidations,
    touches,
    kept,
    written,
    advance: (ms: number) => (now += ms),
    now: () => now,
    failWrites: (fail: boolean) => (failWrites = fail),
  };
}

describe('SessionActivity', () => {
  afterEach(() => jest.useRealTimers());

  it('reads a session once, then records its activity in memory until the next flush', async () => {
    const t = setUp(() => record());
    await t.activity.touch('acc_1', SESSION_ID);
    t.advance(10);
    const again = await t.activity.touch('acc_1', SESSION_ID);
    expect(again.nodeId).toBe('node-a');
    expect(t.touches).toHaveLength(1);
    await t.activity.flush();
    expect(t.written).toEqual([new Map([[SESSION_ID, new Date(t.now())]])]);
    await t.activity.stop();
  });

  it('goes to the database again once another replica changed the session', async () => {
    let state: SessionRecord['state'] = 'active';
    const t = setUp(() => record({ state }));
    await t.activity.touch('acc_1', SESSION_ID);
    state = 'idle';
    await t.invalidations.bump([sessionStamp(SESSION_ID)]);
    expect((await t.activity.touch('acc_1', SESSION_ID)).state).toBe('idle');
    expect(t.touches).toHaveLength(2);
    // Not active: every request goes to the database until it is woken.
    await t.activity.touch('acc_1', SESSION_ID);
    expect(t.touches).toHaveLength(3);
    await t.activity.stop();
  });

  it("never answers another account's request from memory", async () => {
    const t = setUp(() => record());
    await t.activity.touch('acc_1', SESSION_ID);
    await expect(t.activity.touch('acc_2', SESSION_ID)).rejects.toMatchObject({
      code: 'session_not_found',
    });
    expect(t.touches).toHaveLength(2);
    await t.activity.stop();
  });
});

describe('SessionActivity: writes at deadlines, failed writes, the flush timer', () => {
  afterEach(() => jest.useRealTimers());

  it('writes at once when the session is near its idle deadline or its expiry', async () => {
    const expiresAt = 1000 + IDLE_MS + 3 * DEFER_MARGIN_MS;
    const t = setUp(() => record({ expiresAt: new Date(expiresAt) }));
    await t.activity.touch('acc_1', SESSION_ID);
    t.advance(IDLE_MS - DEFER_MARGIN_MS - 1);
    await t.activity.touch('acc_1', SESSION_ID);
    expect(t.touches).toHaveLength(1);
    t.advance(2);
    await t.activity.touch('acc_1', SESSION_ID); // near idle: written, and the deadline moves
    expect(t.touches).toHaveLength(2);
    await t.activity.touch('acc_1', SESSION_ID);
    expect(t.touches).toHaveLength(2);
    t.advance(expiresAt - DEFER_MARGIN_MS + 1 - t.now()); // now near the expiry
    await t.activity.touch('acc_1', SESSION_ID);
    expect(t.touches).toHaveLength(3);
    await t.activity.stop();
  });

  it("records a run's end with the next flush, or at once near a transition or when not cached", async () => {
    const t = setUp(() => record());
    t.activity.seen(SESSION_ID); // never read by this replica
    expect(t.kept).toEqual([SESSION_ID]);
    await t.activity.touch('acc_1', SESSION_ID);
    t.advance(100);
    t.activity.seen(SESSION_ID);
    expect(t.kept).toHaveLength(1);
    await t.activity.flush();
    expect(t.written).toEqual([new Map([[SESSION_ID, new Date(t.now())]])]);
    t.advance(IDLE_MS - DEFER_MARGIN_MS); // the idle deadline of the record read is near
    t.activity.seen(SESSION_ID);
    expect(t.kept).toHaveLength(2);
    await t.activity.stop();
  });

  it('keeps activity it could not write for the next flush', async () => {
    const t = setUp(() => record());
    await t.activity.touch('acc_1', SESSION_ID);
    await t.activity.touch('acc_1', SESSION_ID);
    t.failWrites(true);
    await t.activity.flush();
    expect(t.written).toHaveLength(0);
    t.failWrites(false);
    await t.activity.flush();
    expect([...(t.written[0]?.keys() ?? [])]).toEqual([SESSION_ID]);
    await t.activity.stop();
  });

  it('flushes by itself every second', async () => {
    jest.useFakeTimers();
    const t = setUp(() => record());
    await t.activity.touch('acc_1', SESSION_ID);
    await t.activity.touch('acc_1', SESSION_ID);
    await jest.advanceTimersByTimeAsync(1000);
    expect(t.written).toHaveLength(1);
    await t.activity.stop();
  });
});
