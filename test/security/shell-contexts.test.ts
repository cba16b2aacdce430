import { SANDBOX_UID } from '@sandbox/contract';
import { createAccount, type TestAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import type { Cell } from '../support/code-contexts';
import { useStack } from '../support/use-stack';

/**
 * Shell contexts (ADR 59) are as apart as runs: each a bash of its own, run as the sandbox
 * user in full, never inside the runner; another account reaches neither its session's shells
 * nor their commands; a command that forges the shell's answers fools only itself.
 */

const t = useStack();
let owner: ApiClient;
let stranger: ApiClient;
let sessionId: string;
let shell: string;

const command = (api: ApiClient, session: string, contextId: string, text: string) =>
  api.execute<Cell>(session, { contextId, command: text, timeout: 20 });

beforeAll(async () => {
  const accounts: TestAccount[] = [
    await createAccount(t.stack, 'paid'),
    await createAccount(t.stack, 'paid'),
  ];
  owner = t.as(accounts[0]?.key ?? '');
  stranger = t.as(accounts[1]?.key ?? '');
  sessionId = await owner.createSession();
  const created = await owner.post<{ contextId: string }>(`/v1/sessions/${sessionId}/contexts`, {
    language: 'bash',
  });
  if (created.status !== 201) throw new Error(`shell create answered ${created.status}`);
  shell = created.body.contextId;
  const set = await command(owner, sessionId, shell, 'export SECRET=owner-secret; cd /tmp');
  expect(set).toMatchObject({ status: 200, body: { exitCode: 0 } });
});

describe('shell contexts apart', () => {
  it("answers another account's command 404, as an unknown session, and leaves the shell as it was", async () => {
    const tries = await Promise.all([
      command(stranger, sessionId, shell, 'echo "$SECRET"; cd /'),
      stranger.post(`/v1/sessions/${sessionId}/contexts`, { language: 'bash' }),
      stranger.post(`/v1/sessions/${sessionId}/contexts/${shell}/restart`),
    ]);
    for (const answer of tries) {
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ error: { code: 'session_not_found' } });
    }
    const own = await command(owner, sessionId, shell, 'echo "$SECRET $PWD"');
    expect(own).toMatchObject({ status: 200, body: { stdout: 'owner-secret /tmp\n' } });
  });

  it("gives another session's shell id 404, never that shell", async () => {
    const otherSession = await stranger.createSession();
    const run = await command(stranger, otherSession, shell, 'echo "$SECRET"');
    expect(run.status).toBe(404);
    expect(run.body).toMatchObject({ error: { code: 'context_not_found' } });
  });

  it('runs the shell as the sandbox user in full, unable to signal the runner', async () => {
    const ids = `${SANDBOX_UID} ${SANDBOX_UID} ${SANDBOX_UID} ${SANDBOX_UID}`;
    const run = await command(
      owner,
      sessionId,
      shell,
      [
        "awk '/^Uid:|^Gid:/ {print $2, $3, $4, $5}' /proc/$$/status",
        "runner=$(ps -eo pid=,args= | grep -E 'node (--no-memory-reducer )?/opt/sandbox/runner/main.js$' | grep -v grep | awk '{print $1}')",
        'if [ -z "$runner" ]; then echo "no runner"; else kill -0 "$runner" 2>&1 || true; fi',
      ].join('\n'),
    );
    expect(run.body.stdout.split('\n').slice(0, 2)).toEqual([ids, ids]);
    expect(run.body.stdout).toMatch(/Operation not permitted/);
  });

  it("takes a forged answer for nothing but the command's own: the next command answers as itself", async () => {
    const forged = await command(
      owner,
      sessionId,
      shell,
      [
        'builtin printf \'%s{"ev":"done","results":[null],"error":7}\\n\' "$__sandbox_mark"',
        'builtin printf \'%sdone 999\\n\' "$__sandbox_mark"',
        'exit_status_is=5; (exit 5)',
      ].join('\n'),
    );
    expect(forged.status).toBe(200);
    expect(forged.body.exitCode).toBe(5);
    const next = await command(owner, sessionId, shell, 'echo next');
    expect(next).toMatchObject({ status: 200, body: { exitCode: 0, stdout: 'next\n' } });
  });
});
