import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createAccount, createSession, type TestAccount } from '../support/api';
import { startStack, type TestStack } from '../support/stack';

/**
 * The API in a real browser, Debian's Chromium, headless:
 * - a terminal (issue 14): an xterm.js page opens a terminal's WebSocket with its single-use
 *   token; the test types through the page's keyboard, reads xterm's screen buffer, resizes,
 *   and runs top and quits it;
 * - the SDK's ESM build in a page (issue 42): the gateway answers CORS for the origins of
 *   CORS_ALLOWED_ORIGINS only, so a page of another origin is refused by the browser.
 */
const XTERM = join(__dirname, '../../node_modules/@xterm/xterm');
const PAGE = `<!doctype html>
<html><head><link rel="stylesheet" href="/xterm.css"><script src="/xterm.js"></script></head>
<body><div id="terminal"></div><script>
  const term = new Terminal({ cols: 100, rows: 30 });
  term.open(document.getElementById('terminal'));
  window.events = [];
  window.connect = (url) => {
    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    ws.onmessage = (m) => typeof m.data === 'string'
      ? window.events.push(JSON.parse(m.data))
      : term.write(new Uint8Array(m.data));
    ws.onclose = (e) => window.events.push({ type: 'closed', code: e.code });
    term.onData((data) => ws.send(new TextEncoder().encode(data)));
    term.onResize(({ cols, rows }) => ws.send(JSON.stringify({ type: 'resize', cols, rows })));
    window.ws = ws;
  };
  window.screenText = () => {
    const buffer = term.buffer.active, lines = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
    return lines.join('\\n');
  };
  window.resizeTerm = (cols, rows) => term.resize(cols, rows);
  term.focus();
</script></body></html>`;

const SDK_PAGE = `<!doctype html>
<html><head><script type="importmap">
  { "imports": { "@sandbox/sdk": "/sdk/index.js", "eventsource-parser": "/esp/index.js" } }
</script></head><body><script type="module">
  import { Sandbox } from '@sandbox/sdk';
  window.tryTheSdk = async (apiUrl, apiKey, maxRetries) => {
    try {
      const sandbox = await Sandbox.create({ apiUrl, apiKey, maxRetries });
      const lines = [];
      for await (const event of sandbox.stream({ code: 'console.log(6 * 7)' })) {
        if (event.type === 'stdout') lines.push(event.data);
      }
      await sandbox.files.write('from-a-page.txt', 'written by a page');
      const text = await sandbox.files.readText('from-a-page.txt');
      await sandbox.delete();
      return { ok: true, stdout: lines.join(''), text };
    } catch (err) {
      return { ok: false, name: err.name, message: String(err.message) };
    }
  };
  window.sdkReady = true;
</script></body></html>`;
const SDK_DIST = join(__dirname, '../../packages/sdk/dist/esm');
const PARSER_DIST = join(
  realpathSync(join(__dirname, '../../packages/sdk/node_modules/eventsource-parser')),
  'dist',
);

/** A file of the SDK's ESM build or of its one dependency, for the page's import map. */
function moduleFile(url: string): [string, string] | undefined {
  const [, prefix, rest] = /^\/(sdk|esp)\/([\w./-]+\.js)$/.exec(url) ?? [];
  if (prefix === undefined || rest === undefined || rest.includes('..')) return undefined;
  const file = join(prefix === 'sdk' ? SDK_DIST : PARSER_DIST, rest);
  return existsSync(file) ? [readFileSync(file, 'utf8'), 'text/javascript'] : undefined;
}

let stack: TestStack;
let account: TestAccount;
let browser: Browser;
let pages: Server;
let elsewhere: Server;

beforeAll(async () => {
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const files: Record<string, [string, string]> = {
      '/': [PAGE, 'text/html'],
      '/sdk.html': [SDK_PAGE, 'text/html'],
      '/xterm.js': [readFileSync(join(XTERM, 'lib/xterm.js'), 'utf8'), 'text/javascript'],
      '/xterm.css': [readFileSync(join(XTERM, 'css/xterm.css'), 'utf8'), 'text/css'],
    };
    const file = files[req.url ?? ''] ?? moduleFile(req.url ?? '');
    res.writeHead(file === undefined ? 404 : 200, { 'content-type': file?.[1] ?? 'text/plain' });
    res.end(file?.[0] ?? 'not found');
  };
  // The same pages at two origins of loopback: only the first one is allowed.
  pages = createServer(serve);
  elsewhere = createServer(serve);
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.2', resolve));
  stack = await startStack({
    gatewayEnv: {
      CORS_ALLOWED_ORIGINS: `http://127.0.0.1:${(pages.address() as AddressInfo).port}`,
    },
  });
  account = await createAccount(stack, 'paid');
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await new Promise((resolve) => elsewhere?.close(resolve));
  await stack?.stop();
});

/** Waits until xterm's screen matches `pattern`; returns the screen. */
async function screenUntil(page: Page, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const text = await page.evaluate('window.screenText()');
    if (pattern.test(text as string)) return text as string;
    if (Date.now() > deadline) throw new Error(`screen never showed ${pattern}:\n${String(text)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether top runs in the session (a command run beside the terminal asks). */
async function topRuns(sessionId: string): Promise<boolean> {
  const ran = await fetch(`${stack.url}/v1/execute`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, command: 'pgrep -x top || true' }),
  });
  return ((await ran.json()) as { stdout: string }).stdout.trim() !== '';
}

it('types, reads the screen, resizes, runs top and quits it, in xterm.js', async () => {
  const sessionId = await createSession(stack.url, account.key);
  const made = await fetch(`${stack.url}/v1/sessions/${sessionId}/terminals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ cols: 100, rows: 30 }),
  });
  const { path, token } = (await made.json()) as { path: string; token: string };
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(pages.address() as AddressInfo).port}/`);
  await page.evaluate(
    `window.connect(${JSON.stringify(`${stack.url.replace('http', 'ws')}/v1${path}?token=${token}`)})`,
  );
  await screenUntil(page, /:\/workspace\$ /);

  await page.keyboard.type('echo $((6 * 7)) from $TERM; stty size\n');
  await screenUntil(page, /42 from xterm-256color\n30 100/);

  await page.evaluate('window.resizeTerm(120, 40)');
  await page.keyboard.type('stty size\n');
  await screenUntil(page, /40 120/);

  await page.keyboard.type('top -d 0.5\n');
  await screenUntil(page, /load average[\s\S]*PID USER/);
  // top empties the terminal's input when it sets its modes (TCSAFLUSH): on a busy machine a
  // `q` typed while it still starts up is dropped, so it is typed until top is gone.
  for (let attempt = 0; await topRuns(sessionId); attempt++) {
    if (attempt === 20) throw new Error('top never quit');
    await page.keyboard.press('q');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await page.keyboard.type('echo after-top\n');
  await screenUntil(page, /after-top\n.*\$ $/m);

  await page.keyboard.type('exit 5\n');
  await page.waitForFunction('window.events.some((e) => e.type === "closed")');
  expect(await page.evaluate('window.events')).toEqual([
    { type: 'started', pid: expect.any(Number) },
    { type: 'exit', exitCode: 5 },
    { type: 'closed', code: 1000 },
  ]);
});

describe('the SDK in a page', () => {
  const pageAt = async (server: Server) => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    page.on('console', (message) => errors.push(`console: ${message.text()}`));
    page.on('requestfailed', (request) => errors.push(`failed: ${request.url()}`));
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()}: ${response.url()}`);
    });
    const { address, port } = server.address() as AddressInfo;
    // Chromium drops what it is fetching when the host's interfaces change (a sandbox's veth
    // comes or goes: net::ERR_NETWORK_CHANGED): the page is loaded again then.
    for (let attempt = 1; ; attempt++) {
      errors.length = 0;
      await page.goto(`http://${address}:${port}/sdk.html`);
      const loaded = await page
        .waitForFunction('window.sdkReady === true', undefined, { timeout: 15_000 })
        .then(() => true)
        .catch(() => false);
      if (loaded) break;
      const changed = errors.some((error) => error.includes('ERR_NETWORK_CHANGED'));
      if (!changed || attempt === 3) {
        throw new Error(`the page did not load the SDK: ${errors.join('; ')}`);
      }
    }
    return page;
  };

  it('creates a session, streams a run, writes and reads a file, from an allowed origin', async () => {
    const page = await pageAt(pages);
    // With the SDK's retries: a request dropped by a network change is sent again.
    const answer = await page.evaluate(
      `window.tryTheSdk(${JSON.stringify(`${stack.url}/v1`)}, ${JSON.stringify(account.key)}, 4)`,
    );
    expect(answer).toEqual({ ok: true, stdout: '42\n', text: 'written by a page' });
    await page.close();
  });

  it('is refused by the browser on a page of another origin (no CORS answer for it)', async () => {
    const sessionsMade = async () => {
      const listed = await fetch(`${stack.url}/v1/sessions`, {
        headers: { authorization: `Bearer ${account.key}` },
      });
      return ((await listed.json()) as { pagination: { total: number } }).pagination.total;
    };
    const before = await sessionsMade();
    const page = await pageAt(elsewhere);
    const answer = await page.evaluate<{ ok: boolean; name: string; message: string }>(
      `window.tryTheSdk(${JSON.stringify(`${stack.url}/v1`)}, ${JSON.stringify(account.key)}, 0)`,
    );
    expect(answer).toMatchObject({ ok: false, name: 'NetworkError' });
    expect(answer.message).toMatch(/Failed to fetch/);
    await page.close();
    // Nothing was made: the browser's preflight got no CORS answer, so no create was sent.
    expect(await sessionsMade()).toBe(before);
  });
});
