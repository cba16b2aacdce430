import { Sandbox } from '@sandbox/sdk';
import { createAccount, type TestAccount } from '../support/api';
import { previewRequest, startPreviewApp } from '../support/preview-app';
import { useStack } from '../support/use-stack';

/**
 * A private preview's token kept for the session's owner (issue 42, ADR 41): the session's
 * info shows it again, so `Sandbox.connect(id).previewHeaders()` opens the preview through the
 * edge; the database holds it only hashed and sealed; a session made before it was kept
 * (hash only) still opens with the token given by hand, and simply does not show it.
 */
const t = useStack({ edge: true });
let paid: TestAccount;
const client = () => ({ apiKey: paid.key, apiUrl: `${t.stack.url}/v1` });
const hostOf = (url: string) => new URL(url).host;
const db = () => t.stack.gateways[0]!.db;

beforeAll(async () => {
  paid = await createAccount(t.stack, 'paid');
});

/** The status of a request for the session's preview (port 3000) through the edge. */
async function previewStatus(sandbox: Sandbox, headers: Record<string, string>) {
  const edge = t.stack.edge?.url ?? '';
  return (await previewRequest(edge, hostOf(sandbox.previewUrl()), '/', headers)).status;
}

it('shows the token in the info, and connect() fills previewHeaders() from it', async () => {
  const made = await Sandbox.create({ ...client(), preview: { private: true } });
  try {
    expect(made.previewToken).toMatch(/^pvt_/);
    expect((await made.info()).previewToken).toBe(made.previewToken);
    await startPreviewApp(t.stack.url, paid.key, made.id, [3000]);

    const connected = await Sandbox.connect(made.id, client());
    expect(connected.previewToken).toBe(made.previewToken);
    expect(connected.previewHeaders()).toEqual({ 'x-preview-token': made.previewToken });
    expect(await previewStatus(connected, {})).toBe(403);
    expect(await previewStatus(connected, connected.previewHeaders())).toBe(200);

    // At rest: the hash and a sealed value, never the token itself.
    const { rows } = await db().query<{ row: string; sealed: string }>(
      'SELECT row_to_json(s)::text AS row, preview_token_sealed AS sealed FROM sessions s WHERE id = $1',
      [made.id],
    );
    expect(rows[0]?.sealed).toMatch(/^v1\./);
    expect(rows[0]?.row).not.toContain(made.previewToken!.slice(4));
  } finally {
    await made.delete();
  }
});

it('keeps sessions made before (hash only) working: the token is not shown again', async () => {
  const made = await Sandbox.create({ ...client(), preview: { private: true } });
  try {
    await db().query('UPDATE sessions SET preview_token_sealed = NULL WHERE id = $1', [made.id]);
    expect((await made.info()).previewToken).toBeUndefined();
    await startPreviewApp(t.stack.url, paid.key, made.id, [3000]);
    const bare = await Sandbox.connect(made.id, client());
    expect(bare.previewHeaders()).toEqual({});
    const given = await Sandbox.connect(made.id, { ...client(), previewToken: made.previewToken });
    expect(await previewStatus(given, given.previewHeaders())).toBe(200);
  } finally {
    await made.delete();
  }
});

it('shows no token for a public preview, nor in the list', async () => {
  const open = await Sandbox.create(client());
  const closed = await Sandbox.create({ ...client(), preview: { private: true } });
  try {
    expect(await open.info()).not.toHaveProperty('previewToken');
    expect((await Sandbox.connect(open.id, client())).previewHeaders()).toEqual({});
    const page = await Sandbox.listPage({ ...client(), limit: 100 });
    expect(JSON.stringify(page)).not.toContain(closed.previewToken!);
  } finally {
    await open.delete();
    await closed.delete();
  }
});
