import { refused, SocketTerminal } from '../support/terminal-socket';
import { useStackWithAccount } from '../support/use-stack';

/**
 * Terminals through the gateway (issue 14): POST /v1/sessions/{id}/terminals, then one
 * WebSocket with the terminal's token or the API key; typing, resize, exit; the session
 * stays active while the socket is open and goes idle after it closed.
 */
const t = useStackWithAccount('paid', {
  stack: {
    gatewayEnv: { SESSION_IDLE_AFTER_S: '1', SESSION_DEEP_SLEEP_AFTER_S: '600' },
  },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Made {
  terminalId: string;
  sessionId: string;
  path: string;
  token: string;
  tokenExpiresAt: string;
}

function makeTerminal(sessionId: string, body: Record<string, unknown> = {}, client = t.api) {
  return client.post<Made>(`/v1/sessions/${sessionId}/terminals`, body);
}

const socketUrl = (path: string, token?: string) =>
  `${t.stack.url.replace('http', 'ws')}/v1${path}${token === undefined ? '' : `?token=${token}`}`;

async function openWithToken(made: Made): Promise<SocketTerminal> {
  const opened = await SocketTerminal.open(socketUrl(made.path, made.token));
  if (refused(opened)) throw new Error(`refused: ${opened.status} ${opened.body}`);
  return opened;
}

const state = async (sessionId: string) =>
  (await t.api.session<{ state: string }>(sessionId)).body.state;

it('makes a terminal and opens it once with its token: typing, resize, exit code', async () => {
  const sessionId = await t.api.createSession();
  await t.api.execute(sessionId, { command: 'mkdir -p sub' });
  const made = await makeTerminal(sessionId, {
    shell: '/bin/bash',
    cols: 100,
    rows: 30,
    env: { GREETING: 'hello' },
    cwd: 'sub',
  });
  expect(made.status).toBe(201);
  expect(made.body).toMatchObject({
    terminalId: expect.stringMatching(/^term_/),
    sessionId,
    path: `/sessions/${sessionId}/terminals/${made.body.terminalId}/connect`,
    token: expect.stringMatching(/^tty_/),
  });
  const term = await openWithToken(made.body);
  // bash reads the image's bashrc: its prompt is user@host:dir$
  await term.until(/sandbox@\w+:\/workspace\/sub\$ /);
  expect(term.controls[0]).toMatchObject({ type: 'started', pid: expect.any(Number) });

  let mark = term.screen.length;
  term.type('echo "$GREETING from $PWD as $TERM"; stty size\r');
  await term.until(/hello from \/workspace\/sub as xterm-256color\r\n30 100\r\n/, mark);
  mark = term.screen.length;
  term.resize(132, 43);
  term.type('stty size\r');
  await term.until(/43 132\r\n/, mark);

  term.type('exit 4\r');
  expect(await term.closed).toEqual({ code: 1000, reason: 'exited' });
  expect(term.controls.at(-1)).toEqual({ type: 'exit', exitCode: 4 });

  // Once: the token opened it, and cannot again.
  const again = await SocketTerminal.open(socketUrl(made.body.path, made.body.token));
  expect(refused(again) && again.status).toBe(401);
});

it('opens with the API key instead of the token, once', async () => {
  const sessionId = await t.api.createSession();
  const made = (await makeTerminal(sessionId)).body;
  const headers = { authorization: `Bearer ${t.account.key}` };
  const opened = await SocketTerminal.open(socketUrl(made.path), headers);
  if (refused(opened)) throw new Error(`refused: ${opened.status} ${opened.body}`);
  await opened.until(/:\/workspace\$ /);
  opened.ws.close();
  await opened.closed;
  const again = await SocketTerminal.open(socketUrl(made.path), headers);
  expect(refused(again) && again.status).toBe(404);
});

it('keeps the session active while the terminal is open, and lets it idle after', async () => {
  const sessionId = await t.api.createSession();
  const term = await openWithToken((await makeTerminal(sessionId)).body);
  await term.until(/:\/workspace\$ /);
  await sleep(3000);
  expect(await state(sessionId)).toBe('active');
  term.ws.close();
  await term.closed;
  const deadline = Date.now() + 10_000;
  while ((await state(sessionId)) !== 'idle') {
    if (Date.now() > deadline) throw new Error('the session never went idle');
    await sleep(200);
  }
});

it('forgets terminals a day after they were made, at a sweep', async () => {
  const sessionId = await t.api.createSession();
  const { terminalId } = (await makeTerminal(sessionId)).body;
  const [gateway] = t.stack.gateways;
  const count = async () =>
    (await gateway!.db.query('SELECT 1 FROM terminals WHERE id = $1', [terminalId])).rowCount;
  await gateway!.sweeper.sweep();
  expect(await count()).toBe(1);
  await gateway!.db.query(
    "UPDATE terminals SET created_at = now() - interval '25 hours' WHERE id = $1",
    [terminalId],
  );
  await gateway!.sweeper.sweep();
  expect(await count()).toBe(0);
});

it('refuses bad input with the API error shape', async () => {
  const sessionId = await t.api.createSession();
  const badShell = await makeTerminal(sessionId, { shell: 'bash' });
  expect(badShell.status).toBe(400);
  expect(badShell.body).toMatchObject({ error: { code: 'invalid_request' } });
  const badSize = await makeTerminal(sessionId, { cols: 0 });
  expect(badSize.status).toBe(400);
  const outside = await makeTerminal(sessionId, { cwd: '../etc' });
  expect(outside.body).toMatchObject({ error: { code: 'invalid_path' } });
  const unknown = await makeTerminal('ses_aaaaaaaaaaaaaaaaaaaaaaaa');
  expect(unknown.status).toBe(404);

  // A text message that is no control closes the socket (1003).
  const term = await openWithToken((await makeTerminal(sessionId)).body);
  term.ws.send('not json');
  expect((await term.closed).code).toBe(1003);
});
