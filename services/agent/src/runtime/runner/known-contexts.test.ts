import { AppError } from '@sandbox/errors';
import type { RunSpec } from '../sandbox-runtime';
import { KnownContexts } from './known-contexts';
import type { RunnerClient } from './runner-client';

const ID = 'ctx_0123456789abcdef01234567';
const INFO = { contextId: ID, language: 'typescript', cwd: '/workspace', createdAt: 'now' };
const notFound = () => new AppError('context_not_found', 'No such context');

/** The code of what `promise` rejected with. */
const codeOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'resolved',
    (err: unknown) => (err as AppError).code,
  );

/** A runner that knows the contexts in `live`, and records the requests it was sent. */
function fakeRunner(live: Set<string>) {
  const sent: Record<string, unknown>[] = [];
  const runner = {
    request: (request: Record<string, unknown>) => {
      sent.push(request);
      const id = request.contextId as string | undefined;
      if (request.action === 'create') {
        live.add(id ?? ID);
        return Promise.resolve({ contexts: [{ ...INFO, contextId: id ?? ID }] });
      }
      if (id !== undefined && !live.has(id)) return Promise.reject(notFound());
      if (request.action === 'delete') live.delete(id ?? '');
      return Promise.resolve({ contexts: request.action === 'delete' ? [] : [INFO] });
    },
  };
  return { runner: runner as unknown as RunnerClient, sent };
}

const create = {
  action: 'create',
  language: 'javascript',
  cwd: '/workspace/a',
  env: { A: '1' },
} as const;
const spec = (contextId?: string) => ({ sessionId: 's', contextId }) as RunSpec;

describe('KnownContexts', () => {
  it('makes a lost context again under its id, as it was made, on restart', async () => {
    const known = new KnownContexts();
    const live = new Set<string>();
    const { runner, sent } = fakeRunner(live);
    await known.manage('s', create, runner);
    live.clear(); // the runner went (deep sleep)
    const restarted = await known.manage('s', { action: 'restart', contextId: ID }, runner);
    expect(restarted.map((c) => c.contextId)).toEqual([ID]);
    expect(sent.at(-1)).toEqual({
      op: 'context',
      action: 'create',
      language: 'javascript',
      cwd: '/workspace/a',
      env: { A: '1' },
      contextId: ID,
    });
  });

  it('answers a cell of a lost context context_lost, of an unknown one context_not_found', async () => {
    const known = new KnownContexts();
    const { runner } = fakeRunner(new Set());
    await known.manage('s', create, runner);
    const lost = await codeOf(known.cell(spec(ID), () => Promise.reject(notFound())));
    expect(lost).toBe('context_lost');
    const other = 'ctx_ffffffffffffffffffffffff';
    const unknown = await codeOf(known.cell(spec(other), () => Promise.reject(notFound())));
    expect(unknown).toBe('context_not_found');
  });

  it('forgets a deleted context, and a lost one deletes without complaint', async () => {
    const known = new KnownContexts();
    const live = new Set<string>();
    const { runner } = fakeRunner(live);
    await known.manage('s', create, runner);
    live.clear();
    await expect(known.manage('s', { action: 'delete', contextId: ID }, runner)).resolves.toEqual(
      [],
    );
    const after = await codeOf(known.cell(spec(ID), () => Promise.reject(notFound())));
    expect(after).toBe('context_not_found');
  });

  it('forgets a session', async () => {
    const known = new KnownContexts();
    const { runner } = fakeRunner(new Set());
    await known.manage('s', create, runner);
    known.forget('s');
    const gone = await codeOf(known.cell(spec(ID), () => Promise.reject(notFound())));
    expect(gone).toBe('context_not_found');
  });
});
