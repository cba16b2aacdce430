import { InvalidRequestError, Sandbox, UnauthorizedError } from '../src';
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
