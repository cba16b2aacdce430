import {
  InvalidRequestError,
  Sandbox,
  SnapshotNotFoundError,
  SnapshotQuotaExceededError,
  Snapshots,
  UnauthorizedError,
} from '../src';
import { apiError, clientOf, json, sessionInfo, type Call } from './fake-api';

/** An account with `total` sessions (newest first); `shift` more appear after the first page. */
function listing(total: number, shift = 0) {
  let served = 0;
  return (call: Call): Response => {
    const limit = Number(call.query.get('limit') ?? 50);
    const offset = Number(call.query.get('offset') ?? 0);
    const count = total + (served > 0 ? shift : 0);
    const all = Array.from({ length: count }, (_, i) =>
      sessionInfo(`ses_${String(count - i).padStart(3, '0')}`),
    );
    served += 1;
    const data = all.slice(offset, offset + limit);
    return json({
      data,
      pagination: { total: all.length, limit, offset, hasMore: offset + data.length < all.length },
    });
  };
}

describe('Sandbox.list', () => {
  it('iterates over every page', async () => {
    const api = clientOf(listing(5));
    const ids: string[] = [];
    for await (const session of Sandbox.list({ ...api.options, limit: 2 })) {
      ids.push(session.sessionId);
    }
    expect(ids).toEqual(['ses_005', 'ses_004', 'ses_003', 'ses_002', 'ses_001']);
    expect(api.calls.map((c) => c.query.get('offset'))).toEqual(['0', '2', '4']);
  });

  it('gives a session moved to the next page by a new one only once', async () => {
    const api = clientOf(listing(3, 1));
    const all = await Sandbox.list({ ...api.options, limit: 2 }).toArray();
    expect(all.map((s) => s.sessionId)).toEqual(['ses_003', 'ses_002', 'ses_001']);
  });

  it('still gives one page when awaited, and through listPage', async () => {
    const api = clientOf(listing(5));
    const page = await Sandbox.list({ ...api.options, limit: 2, offset: 1 });
    expect(page.data.map((s) => s.sessionId)).toEqual(['ses_004', 'ses_003']);
    expect(page.pagination).toMatchObject({ total: 5, hasMore: true });
    const listed = await Sandbox.listPage({ ...api.options, limit: 1 });
    expect(listed.data).toHaveLength(1);
    const refused = clientOf(() => apiError(401, 'unauthorized'));
    await expect(Sandbox.list(refused.options)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(await Sandbox.list(refused.options).catch(() => 'caught')).toBe('caught');
  });
});

describe('Sandbox.delete', () => {
  it('deletes a session by its id; one already gone is no error', async () => {
    const api = clientOf(() => json({ deleted: true, sessionId: 'ses_abc' }));
    await Sandbox.delete('ses_abc', api.options);
    expect(api.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['DELETE /sessions/ses_abc']);
    const gone = clientOf(() => apiError(404, 'session_not_found'));
    await expect(Sandbox.delete('ses_abc', gone.options)).resolves.toBeUndefined();
    const refused = clientOf(() => apiError(401, 'unauthorized'));
    await expect(Sandbox.delete('ses_abc', refused.options)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });
});

describe('Sandbox.create and connect', () => {
  const created = (call: Call) =>
    call.path === '/sessions/create'
      ? json({ ...sessionInfo(), resourceLimits: {}, previewToken: 'pvt_1' })
      : json(sessionInfo());

  it('takes the ttl in milliseconds (whole seconds on the wire), or in seconds (deprecated)', async () => {
    const api = clientOf(created);
    await Sandbox.create({ ...api.options, ttlMs: 90_500 });
    await Sandbox.create({ ...api.options, ttl: 60 });
    expect(api.calls.map((c) => c.body?.ttl)).toEqual([91, 60]);
    await expect(Sandbox.create({ ...api.options, ttl: 1, ttlMs: 1000 })).rejects.toBeInstanceOf(
      InvalidRequestError,
    );
  });

  it('keeps the preview token given at creation, or to connect', async () => {
    const api = clientOf(created);
    const made = await Sandbox.create(api.options);
    expect(made.previewHeaders()).toEqual({ 'x-preview-token': 'pvt_1' });
    const again = await Sandbox.connect(made.id, { ...api.options, previewToken: 'pvt_1' });
    expect(again.previewHeaders()).toEqual({ 'x-preview-token': 'pvt_1' });
  });
});

describe('snapshots', () => {
  const snapshot = {
    snapshotId: 'snap_abc',
    sessionId: 'ses_abc',
    name: 'base',
    sizeBytes: 10,
    processesKept: false,
    createdAt: '2026-11-29T00:00:00.000Z',
  };
  const route = (call: Call) => {
    if (call.path === '/sessions/create') return json({ ...sessionInfo(), resourceLimits: {} });
    if (call.path.endsWith('/snapshots') && call.method === 'POST') return json(snapshot, 201);
    if (call.path === '/snapshots') {
      return json({
        data: [snapshot],
        pagination: { total: 1, limit: 1, offset: 0, hasMore: false },
      });
    }
    if (call.method === 'DELETE') return apiError(404, 'snapshot_not_found');
    return json(snapshot);
  };

  it('takes one of a session, starts a session from one, lists, reads and deletes them', async () => {
    const api = clientOf(route);
    const made = await Sandbox.create(api.options);
    expect(await made.snapshot({ name: 'base', processes: true })).toEqual(snapshot);
    await Sandbox.create({ ...api.options, snapshotId: 'snap_abc' });
    const snapshots = new Snapshots(api.options);
    expect((await snapshots.list({ limit: 1 })).data).toEqual([snapshot]);
    expect(await snapshots.get('snap_abc')).toEqual(snapshot);
    // Already gone: what was asked is done.
    await expect(snapshots.delete('snap_abc')).resolves.toBeUndefined();
    expect(api.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      'POST /sessions/create',
      `POST /sessions/${made.id}/snapshots`,
      'POST /sessions/create',
      'GET /snapshots',
      'GET /snapshots/snap_abc',
      'DELETE /snapshots/snap_abc',
    ]);
    expect(api.calls[1]?.body).toEqual({ name: 'base', processes: true });
    expect(api.calls[1]?.headers['idempotency-key']).toBeDefined();
    expect(api.calls[2]?.body).toMatchObject({ snapshotId: 'snap_abc' });
    expect(api.calls[3]?.query.get('limit')).toBe('1');
  });

  it('throws the quota and not-found errors as their classes', async () => {
    const full = clientOf(() => apiError(429, 'snapshot_quota_exceeded'));
    await expect(new Snapshots(full.options).get('snap_x')).rejects.toBeInstanceOf(
      SnapshotQuotaExceededError,
    );
    const missing = clientOf(() => apiError(404, 'snapshot_not_found'));
    await expect(new Snapshots(missing.options).get('snap_x')).rejects.toBeInstanceOf(
      SnapshotNotFoundError,
    );
  });
});
