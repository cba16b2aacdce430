import { chromium, type Browser } from 'playwright-core';
import { createAccount, createSession, type TestAccount } from '../support/api';
import { startPreviewApp } from '../support/preview-app';
import { startStack, type TestStack } from '../support/stack';

/**
 * A real browser (Debian's Chromium, headless) opens an app served inside a session through
 * the edge proxy: the page, its fetch and its WebSocket all go through the preview.
 */

let stack: TestStack;
let account: TestAccount;
let browser: Browser;

beforeAll(async () => {
  stack = await startStack({ edge: true });
  account = await createAccount(stack);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    // Playwright gives the browser a new, empty profile directory of its own.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // Preview hosts resolve to the edge proxy on loopback, and nowhere else.
      '--host-resolver-rules=MAP *.preview.test 127.0.0.1, EXCLUDE localhost',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

it('shows a page served by a Node app in the session, with its fetch and WebSocket working', async () => {
  const sessionId = await createSession(stack.url, account.key);
  await startPreviewApp(stack.url, account.key, sessionId);
  const edgePort = new URL(stack.edge?.url ?? '').port;
  const page = await browser.newPage();
  const url = `http://${sessionId.replace('_', '-')}.preview.test:${edgePort}/`;
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  expect(await page.textContent('#title')).toBe('Hello from the sandbox');
  await page.waitForFunction("document.getElementById('ws').textContent !== 'waiting'", null, {
    timeout: 15_000,
  });
  expect(await page.textContent('#ws')).toBe('echo: ping from the page');
  expect(await page.textContent('#api')).toBe('api ok on port 3000');
  await page.close();
});

it('shows the 404 page for a session that does not exist', async () => {
  const edgePort = new URL(stack.edge?.url ?? '').port;
  const page = await browser.newPage();
  const response = await page.goto(`http://ses-${'0'.repeat(24)}.preview.test:${edgePort}/`);
  expect(response?.status()).toBe(404);
  expect(await page.textContent('h1')).toBe('Preview not found');
  await page.close();
});
