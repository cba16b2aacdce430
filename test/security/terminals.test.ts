import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { refused, SocketTerminal } from '../support/terminal-socket';
import { useStackWithStranger } from '../support/use-stack';

/**
 * Terminals (issue 14) against another account and against abuse: nobody but the session's
 * account makes or opens its terminals, a token opens only its own terminal on its own
 * session and only once (a wrong path spends nothing), a key without the execute scope gets
 * nowhere, and a deleted session's terminal closes.
 */
const t = useStackWithStranger();

interface Made {
  terminalId: string;
  path: string;
  token: string;
}

const url = (path: string, token?: string) =>
  `${t.stack.url.replace('http', 'ws')}/v1${path}${token === undefined ? '' : `?token=${token}`}`;
const make = async (client: ApiClient, sessionId: string) =>
  client.post<Made>(`/v1/sessions/${sessionId}/terminals`, {});
const status = async (opened: Promise<SocketTerminal | { status: number; body: string }>) => {
  const result = await opened;
  if (!refused(result)) {
    result.ws.close();
    return 'opened';
  }
  return result.status;
};

it("refuses another account: it can neither make nor open the session's terminals", async () => {
  const sessionId = await t.mine.createSession();
  const made = await make(t.theirs, sessionId);
  expect(made.status).toBe(404);
  expect(made.body).toMatchObject({ error: { code: 'session_not_found' } });

  const terminal = (await make(t.mine, sessionId)).body;
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  expect(await status(SocketTerminal.open(url(terminal.path), auth(t.stranger.key)))).toBe(404);
  // The stranger's own session path with the owner's terminal: not found either.
  const strangers = await t.theirs.createSession();
  const elsewhere = terminal.path.replace(sessionId, strangers);
  expect(await status(SocketTerminal.open(url(elsewhere), auth(t.stranger.key)))).toBe(404);
  expect(await status(SocketTerminal.open(url(elsewhere, terminal.token)))).toBe(401);
  // None of that spent it: the owner's token still opens it, once.
  expect(await status(SocketTerminal.open(url(terminal.path, terminal.token)))).toBe('opened');
  expect(await status(SocketTerminal.open(url(terminal.path, terminal.token)))).toBe(401);
});

it('refuses no key, a bad key, a forged token, and a key without the execute scope', async () => {
  const sessionId = await t.mine.createSession();
  const terminal = (await make(t.mine, sessionId)).body;
  expect(await status(SocketTerminal.open(url(terminal.path)))).toBe(401);
  const bad = { authorization: 'Bearer sk_live_0000000000000000000000000000000000' };
  expect(await status(SocketTerminal.open(url(terminal.path), bad))).toBe(401);
  expect(await status(SocketTerminal.open(url(terminal.path, `${terminal.token}x`)))).toBe(401);
  expect(await status(SocketTerminal.open(url(terminal.path, 'tty_forged')))).toBe(401);

  const filesOnly = await createAccount(t.stack, 'paid', { scopes: ['sessions', 'files'] });
  const limited = t.as(filesOnly.key);
  const own = await limited.createSession();
  expect((await make(limited, own)).status).toBe(403);
  const ownTerminal = await make(t.mine, sessionId);
  const headers = { authorization: `Bearer ${filesOnly.key}` };
  expect(await status(SocketTerminal.open(url(ownTerminal.body.path), headers))).toBe(403);
});

it('closes a terminal whose session is deleted, and makes none for it after', async () => {
  const sessionId = await t.mine.createSession();
  const terminal = (await make(t.mine, sessionId)).body;
  const term = await SocketTerminal.open(url(terminal.path, terminal.token));
  if (refused(term)) throw new Error(`refused: ${term.status}`);
  await term.until(/\$ /);
  await t.mine.deleteSession(sessionId);
  const closed = await term.closed;
  expect([1000, 1011]).toContain(closed.code);
  expect((await make(t.mine, sessionId)).status).toBe(404);
});
