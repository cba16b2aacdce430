import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createAccount, createSession, type TestAccount } from '../support/api';
import { startStack, type TestStack } from '../support/stack';

/**
 * A terminal in a real browser (issue 14): an xterm.js page in Debian's Chromium, headless,
 * opens a terminal's WebSocket with its single-use token. The test types through the page's
 * keyboard, reads xterm's screen buffer, resizes, and runs top and quits it.
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

let stack: TestStack;
let account: TestAccount;
let browser: Browser;
let pages: Server;

beforeAll(async () => {
  stack = await startStack();
  account = await createAccount(stack, 'paid');
  pages = createServer((req, res) => {
    const files: Record<string, [string, string]> = {
      '/': [PAGE, 'text/html'],
      '/xterm.js': [readFileSync(join(XTERM, 'lib/xterm.js'), 'utf8'), 'text/javascript'],
      '/xterm.css': [readFileSync(join(XTERM, 'css/xterm.css'), 'utf8'), 'text/css'],
    };
    const file = files[req.url ?? ''];
    res.writeHead(file === undefined ? 404 : 200, { 'content-type': file?.[1] ?? 'text/plain' });
    res.end(file?.[0] ?? 'not found');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
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
  await page.keyboard.press('q');
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
