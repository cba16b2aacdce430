import { SANDBOX_UID } from '@sandbox/contract';
import { createAccount, type TestAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { useStack } from '../support/use-stack';

/**
 * Code contexts (ADR 42) are as apart as runs: each context a process of its own, run as the
 * sandbox user in full, never inside the runner; another account reaches neither its session's
 * contexts nor their cells.
 */

const t = useStack();
let owner: ApiClient;
let stranger: ApiClient;
let sessionId: string;
let contextId: string;

interface Cell {
  stdout: string;
  exitCode: number;
  results?: Array<Record<string, unknown>>;
  error?: { name: string; message: string };
}

const cell = (api: ApiClient, id: string, code: string) =>
  api.execute<Cell>(sessionId, { contextId: id, code, timeout: 20 });
const mainText = (body: Cell) =>
  body.results?.find((r) => r.isMain === true)?.['text/plain'] as string | undefined;

async function newContext(): Promise<string> {
  const created = await owner.post<{ contextId: string }>(`/v1/sessions/${sessionId}/contexts`, {});
  if (created.status !== 201) throw new Error(`context create answered ${created.status}`);
  return created.body.contextId;
}

beforeAll(async () => {
  const accounts: TestAccount[] = [
    await createAccount(t.stack, 'paid'),
    await createAccount(t.stack, 'paid'),
  ];
  owner = t.as(accounts[0]?.key ?? '');
  stranger = t.as(accounts[1]?.key ?? '');
  sessionId = await owner.createSession();
  contextId = await newContext();
  const first = await cell(
    owner,
    contextId,
    "globalThis.secret = 'owner-secret'; const mine = 'owner-const';",
  );
  // The context holds the secret (a failure shows the whole answer).
  expect(first).toMatchObject({ status: 200, body: { exitCode: 0 } });
});

describe('code contexts apart', () => {
  it('answers another account 404 for every context route and for a cell, as an unknown session', async () => {
    const base = `/v1/sessions/${sessionId}/contexts`;
    const answers = await Promise.all([
      stranger.get(base),
      stranger.post(base, {}),
      stranger.delete(`${base}/${contextId}`),
      stranger.post(`${base}/${contextId}/restart`),
      stranger.execute(sessionId, { contextId, code: 'secret' }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ error: { code: 'session_not_found' } });
    }
    // The context is untouched.
    const after = await cell(owner, contextId, 'secret');
    expect(after).toMatchObject({
      status: 200,
      body: { results: [{ isMain: true, 'text/plain': "'owner-secret'" }] },
    });
  });

  it("gives another session's context id 404, never that context", async () => {
    const otherSession = await stranger.createSession();
    const run = await stranger.execute(otherSession, { contextId, code: 'secret' });
    expect(run.status).toBe(404);
    expect(run.body).toMatchObject({ error: { code: 'context_not_found' } });
  });

  it("never shows one context another's variables", async () => {
    const other = await newContext();
    const seen = await cell(
      owner,
      other,
      "[typeof secret, typeof mine, Object.keys(globalThis).includes('secret')].join()",
    );
    expect(mainText(seen.body)).toBe("'undefined,undefined,false'");
  });

  it('runs each context in a process of its own, as the sandbox user in full', async () => {
    const pidA = mainText((await cell(owner, contextId, 'process.pid')).body);
    const other = await newContext();
    const pidB = mainText((await cell(owner, other, 'process.pid')).body);
    expect(pidA).not.toBe(pidB);
    const run = await owner.execute<{ stdout: string }>(sessionId, {
      command: `for p in ${pidA} ${pidB}; do awk '/^Uid:|^Gid:/ {print $2, $3, $4, $5}' /proc/$p/status; cat /proc/$p/cmdline | tr '\\0' ' '; echo; done`,
    });
    const lines = run.body.stdout.trim().split('\n');
    const ids = `${SANDBOX_UID} ${SANDBOX_UID} ${SANDBOX_UID} ${SANDBOX_UID}`;
    expect(lines).toEqual([
      ids,
      ids,
      expect.stringContaining('/opt/sandbox/runner/context-host.js'),
      ids,
      ids,
      expect.stringContaining('/opt/sandbox/runner/context-host.js'),
    ]);
  });

  it('cannot signal the runner from a cell', async () => {
    const probe = await cell(
      owner,
      contextId,
      [
        "const { execSync } = require('node:child_process');",
        "const runner = execSync(\"ps -eo pid=,args= | grep -E 'node (--no-memory-reducer )?/opt/sandbox/runner/main.js$' | grep -v grep | awk '{print $1}'\").toString().trim();",
        "let outcome = 'no runner';",
        "if (runner !== '') { try { process.kill(Number(runner), 0); outcome = 'reached'; } catch (e) { outcome = e.code; } }",
        'outcome',
      ].join('\n'),
    );
    expect(mainText(probe.body)).toBe("'EPERM'");
  });
});
