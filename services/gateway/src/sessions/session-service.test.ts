import { randomBytes } from 'node:crypto';
import { createLogger } from '@sandbox/logger';
import type { Principal } from '../auth/principal';
import { PAID_PLAN } from '../limits/plan-fixtures';
import type { AgentPool } from '../nodes/agent-pool';
import { SecretBox } from '../secrets/secret-box';
import { hashPreviewToken } from './preview-token';
import { resealPreviewTokens } from './preview-token-reseal';
import type { NewSession, SessionRecord } from './session-record';
import { SessionService } from './session-service';
import type { SessionStore } from './session-store';
import type { Database } from '../db/database';

/** A store that keeps what `insert` got, and gives it back as the record `get` reads. */
function fakeStore() {
  const inserted: NewSession[] = [];
  const record = (session: NewSession): SessionRecord => ({
    id: session.id,
    accountId: session.accountId,
    nodeId: session.nodeId,
    state: 'creating',
    metadata: session.metadata,
    resourceLimits: session.resourceLimits,
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + 60_000),
    lastActiveAt: new Date(),
    sleepFilesCount: null,
    previewPrivate: session.previewTokenHash !== undefined,
    previewTokenSealed: session.previewTokenSealed ?? null,
    savedIn: null,
    sleepConfirmed: false,
    egress: null,
  });
  const store = {
    insert: (session: NewSession) => {
      inserted.push(session);
      return Promise.resolve(record(session));
    },
    markActive: () => Promise.resolve(),
    get: (_accountId: string, id: string) => {
      const found = inserted.find((session) => session.id === id);
      return found
        ? Promise.resolve({ ...record(found), state: 'active' })
        : Promise.reject(new Error('no such session'));
    },
  } as unknown as SessionStore;
  return { store, inserted };
}

const agent = {
  nodeId: 'node-a',
  createSandbox: () => Promise.resolve(),
  getSandbox: () => Promise.resolve({ filesCount: 0, activeProcesses: 0 }),
};
const agents = {
  placeNow: () => Promise.resolve(agent),
  recheck: () => Promise.resolve(),
  forNode: () => agent,
} as unknown as AgentPool;
const limits = PAID_PLAN;
const principal = { accountId: 'acc_1', limits } as unknown as Principal;

function serviceWith(box: SecretBox | undefined) {
  const { store, inserted } = fakeStore();
  const sessions = new SessionService({
    store,
    agents,
    logger: createLogger({ name: 'test', level: 'silent' }),
    previewDomain: 'preview.test',
    previewUrlScheme: 'http',
    box,
  });
  return { sessions, inserted };
}

describe("SessionService: a private preview's token kept for its owner (ADR 41)", () => {
  it('stores the hash and a sealed value, and shows the token in the info', async () => {
    const box = new SecretBox(randomBytes(32));
    const { sessions, inserted } = serviceWith(box);
    const made = await sessions.create(principal, { preview: { private: true } });
    const stored = inserted[0]!;
    expect(stored.previewTokenHash).toEqual(hashPreviewToken(made.previewToken!));
    expect(stored.previewTokenSealed).not.toContain(made.previewToken!.slice(4));
    expect((await sessions.info(principal, made.sessionId)).previewToken).toBe(made.previewToken);
  });

  it('keeps only the hash without a key, and shows nothing for a public preview', async () => {
    const { sessions, inserted } = serviceWith(undefined);
    const made = await sessions.create(principal, { preview: { private: true } });
    expect(made.previewToken).toMatch(/^pvt_/);
    expect(inserted[0]!.previewTokenSealed).toBeUndefined();
    expect(await sessions.info(principal, made.sessionId)).not.toHaveProperty('previewToken');
    const open = serviceWith(new SecretBox(randomBytes(32)));
    const made2 = await open.sessions.create(principal, {});
    expect(open.inserted[0]!.previewTokenSealed).toBeUndefined();
    expect(await open.sessions.info(principal, made2.sessionId)).not.toHaveProperty('previewToken');
  });

  it('shows nothing, and still answers, for a value no configured key opens', async () => {
    const { sessions, inserted } = serviceWith(new SecretBox(randomBytes(32)));
    const made = await sessions.create(principal, { preview: { private: true } });
    inserted[0]!.previewTokenSealed = new SecretBox(randomBytes(32)).seal('pvt_other');
    expect(await sessions.info(principal, made.sessionId)).not.toHaveProperty('previewToken');
  });
});

describe('resealPreviewTokens', () => {
  it('seals again under the current key the tokens sealed under a previous one', async () => {
    const oldKey = randomBytes(32);
    const old = new SecretBox(oldKey);
    const rotated = new SecretBox(randomBytes(32), [oldKey]);
    const rows = [
      { id: 'ses_a', preview_token_sealed: old.seal('pvt_a') },
      { id: 'ses_b', preview_token_sealed: rotated.seal('pvt_b') },
    ];
    const updates: unknown[][] = [];
    const db = {
      query: (sql: string, params: unknown[] = []) => {
        if (sql.startsWith('UPDATE')) updates.push(params);
        return Promise.resolve({ rows: sql.startsWith('SELECT') ? rows : [] });
      },
    } as unknown as Database;
    expect(await resealPreviewTokens(db, rotated)).toBe(1);
    const [id, sealed, was] = updates[0] as [string, string, string];
    expect([id, was]).toEqual(['ses_a', rows[0]!.preview_token_sealed]);
    expect(rotated.isStale(sealed)).toBe(false);
    expect(rotated.open(sealed)).toBe('pvt_a');
  });
});
