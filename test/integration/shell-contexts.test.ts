import { ContextRestartedError, Sandbox } from '@sandbox/sdk';
import { SANDBOX_UID } from '@sandbox/contract';
import type { Cell, Context } from '../support/code-contexts';
import { parseEvents } from '../support/streamed-run';
import { useStackWithAccount } from '../support/use-stack';

/**
 * Shell contexts (ADR 59): a context of language `bash` is one long-lived bash, and each
 * command sent to it (`command` with `contextId`) runs in that shell, so that its directory,
 * variables and functions are there for the next command.
 */

const t = useStackWithAccount('paid', { session: true });

const contextsPath = () => `/v1/sessions/${t.sessionId}/contexts`;
const errorCode = (body: unknown) => (body as { error: { code: string } }).error.code;

async function newShell(body: Record<string, unknown> = {}): Promise<string> {
  const created = await t.api.post<Context>(contextsPath(), { language: 'bash', ...body });
  expect(created.status).toBe(201);
  return created.body.contextId;
}

const run = (contextId: string, command: string, extra: Record<string, unknown> = {}) =>
  t.api.execute<Cell>(t.sessionId, { contextId, command, ...extra });

/** The contexts the cases share; every other is deleted after its case (8 a session at most). */
const shared = new Set<string>();

afterEach(async () => {
  const listed = await t.api.get<{ contexts: Context[] }>(contextsPath());
  for (const { contextId } of listed.body.contexts) {
    if (!shared.has(contextId)) await t.api.delete(`${contextsPath()}/${contextId}`);
  }
});

/** A shell the cases of a describe share, kept past each case. */
async function sharedShell(): Promise<string> {
  const shell = await newShell();
  shared.add(shell);
  return shell;
}

/** The command's stdout, once it answered 200. */
async function stdoutOf(contextId: string, command: string): Promise<string> {
  const answer = await run(contextId, command);
  expect(answer).toMatchObject({ status: 200 });
  return answer.body.stdout;
}

describe('shell contexts', () => {
  let shell: string;

  beforeAll(async () => {
    shell = await sharedShell();
  });

  it('answers a create with the context, listed with the others', async () => {
    const created = await t.api.post<Context>(contextsPath(), { language: 'bash', cwd: 'sh' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      contextId: expect.stringMatching(/^ctx_[0-9a-f]{24}$/),
      language: 'bash',
      cwd: '/workspace/sh',
      createdAt: expect.any(String),
    });
    const listed = await t.api.get<{ contexts: Context[] }>(contextsPath());
    expect(listed.body.contexts).toContainEqual(created.body);
    await t.api.delete(`${contextsPath()}/${created.body.contextId}`);
  });

  it('keeps the directory, variables, exports and functions from one command to the next', async () => {
    const first = await run(
      shell,
      'mkdir -p deep/er && cd deep/er\nkept=41\nexport SHARED=yes\ngreet() { echo "hi $1"; }',
    );
    expect(first.body).toMatchObject({ exitCode: 0, stdout: '', stderr: '', results: [] });
    expect(await stdoutOf(shell, 'pwd; echo $((kept + 1)); greet you')).toBe(
      '/workspace/deep/er\n42\nhi you\n',
    );
    expect(await stdoutOf(shell, 'bash -c \'echo "$SHARED ${kept:-unset}"\'')).toBe('yes unset\n');
    await run(shell, 'cd /workspace');
  });

  it("answers each command's own status, output and error output, and runs as the sandbox user", async () => {
    const failed = await run(shell, 'echo out; echo err >&2; (exit 7)');
    expect(failed.body).toMatchObject({ exitCode: 7, stdout: 'out\n', stderr: 'err\n' });
    expect((await run(shell, 'false')).body.exitCode).toBe(1);
    const unparsed = await run(shell, 'echo "unterminated');
    expect(unparsed.body.exitCode).toBe(2);
    expect(unparsed.body.stderr).toMatch(/unexpected EOF/);
    expect(await stdoutOf(shell, 'id -u; echo still here')).toBe(`${SANDBOX_UID}\nstill here\n`);
  });

  it("counts the CPU of a command's programs, not only the shell's", async () => {
    const busy = await run(shell, "awk 'BEGIN { for (i = 0; i < 10000000; i++) s += i }'");
    expect(busy.body.exitCode).toBe(0);
    expect((busy.body as unknown as { cpuTime: number }).cpuTime).toBeGreaterThanOrEqual(100);
  });

  it('takes any text as the command: backslashes, quotes, here-documents, no newline at the end', async () => {
    const text = await stdoutOf(
      shell,
      [
        `printf '%s|' 'a\\nb' "q\\"d" '\\c' '\\\\'`,
        'cat <<EOF',
        'line $((1 + 1))',
        'EOF',
        'printf tail',
      ].join('\n'),
    );
    expect(text).toBe('a\\nb|q"d|\\c|\\\\|line 2\ntail');
  });

  it("gives a command /dev/null as stdin, never the shell's own", async () => {
    const read = await run(shell, 'cat; read -r line; echo "read $?"');
    expect(read.body).toMatchObject({ exitCode: 0, stdout: 'read 1\n' });
    expect(await stdoutOf(shell, 'echo alive')).toBe('alive\n');
  });
});

describe('shell contexts: their start, streams and jobs', () => {
  let shell: string;

  beforeAll(async () => {
    shell = await sharedShell();
  });

  it('starts in its cwd with the env it was created with', async () => {
    const own = await newShell({ cwd: 'app', env: { GREETING: 'hello' } });
    expect(await stdoutOf(own, 'echo "$PWD $GREETING"')).toBe('/workspace/app hello\n');
  });

  it('streams a command: its output as it comes, then its exit and result', async () => {
    const response = await t.api.executeStream(t.sessionId, {
      contextId: shell,
      command: 'echo one; sleep 0.3; echo two >&2; (exit 3)',
    });
    expect(response.status).toBe(200);
    const events = parseEvents(await response.text());
    const text = (name: string) =>
      events
        .filter((e) => e.event === name)
        .map((e) => e.data['data'])
        .join('');
    expect([text('stdout'), text('stderr')]).toEqual(['one\n', 'two\n']);
    expect(events.some((e) => e.event.startsWith('cell_'))).toBe(false);
    expect(events.at(-1)).toMatchObject({ event: 'result', data: { exitCode: 3 } });
  });

  it('keeps a background job running after its command', async () => {
    const pid = (await stdoutOf(shell, 'sleep 60 >/dev/null 2>&1 & echo $!')).trim();
    expect(await stdoutOf(shell, `kill -0 ${pid} && echo running; kill ${pid}`)).toBe('running\n');
  });
});

describe('shell contexts: what they refuse, and their ends', () => {
  it('refuses code in a shell context, a command in a code context, and env per command', async () => {
    const shell = await newShell();
    const code = await t.api.execute(t.sessionId, { contextId: shell, code: '1 + 1' });
    expect(code.status).toBe(400);
    expect(code.body).toMatchObject({ error: { code: 'invalid_request' } });
    const env = await run(shell, 'echo $X', { env: { X: '1' } });
    expect(env.status).toBe(400);
    expect(env.body).toMatchObject({ error: { code: 'invalid_request' } });
    const js = (await t.api.post<Context>(contextsPath(), { language: 'javascript' })).body;
    const command = await run(js.contextId, 'echo hi');
    expect(command.status).toBe(400);
    expect(command.body).toMatchObject({ error: { code: 'invalid_request' } });
    expect(await stdoutOf(shell, 'echo ok')).toBe('ok\n');
  });

  it('answers context_restarted to a command that ends its shell, and runs the next in a fresh one', async () => {
    const shell = await newShell();
    await run(shell, 'gone=1; cd /tmp');
    const ended = await run(shell, 'exit 3');
    expect(ended.status).toBe(409);
    expect(errorCode(ended.body)).toBe('context_restarted');
    expect(await stdoutOf(shell, 'echo "${gone:-unset} $PWD"')).toBe('unset /workspace\n');
  });

  it('ends the shell, with its background jobs, even those that left its group, at a timeout; the next runs fresh', async () => {
    const shell = await newShell();
    const started = await stdoutOf(
      shell,
      'lost=1; sleep 120 >/dev/null 2>&1 & echo $!; (setsid sleep 120 >/dev/null 2>&1 & echo $!)',
    );
    const pids = started.trim().split('\n');
    expect(pids).toHaveLength(2);
    const timedOut = await run(shell, 'sleep 60', { timeout: 1 });
    expect(timedOut.status).toBe(408);
    // The job in the shell's group, and an orphan out of it and its tree (by the shell's mark).
    const probe = pids.map((pid) => `kill -0 ${pid} 2>/dev/null && echo alive || echo ended`);
    expect(await stdoutOf(shell, ['echo "${lost:-unset}"', ...probe].join('\n'))).toBe(
      'unset\nended\nended\n',
    );
  });

  it('restarts as a fresh shell under the same id, ending what the last one started', async () => {
    const shell = await newShell();
    const orphan = await stdoutOf(shell, 'kept=1; (setsid sleep 120 >/dev/null 2>&1 & echo $!)');
    const restarted = await t.api.post<Context>(`${contextsPath()}/${shell}/restart`);
    expect(restarted.body).toMatchObject({ contextId: shell, language: 'bash' });
    const probe = `echo \${kept:-unset}; kill -0 ${orphan.trim()} 2>/dev/null && echo alive || echo ended`;
    expect(await stdoutOf(shell, probe)).toBe('unset\nended\n');
  });

  it('is reached through the SDK: runCommand, and ContextRestartedError for an ended shell', async () => {
    const sandbox = await Sandbox.connect(t.sessionId, {
      apiKey: t.account.key,
      apiUrl: `${t.stack.url}/v1`,
    });
    const context = await sandbox.createContext({ language: 'bash' });
    expect(context.language).toBe('bash');
    await sandbox.runCommand('cd /tmp && n=2', { context });
    const result = await sandbox.runCommand('echo "$PWD $n"', { context });
    expect(result).toMatchObject({ exitCode: 0, stdout: '/tmp 2\n' });
    await expect(sandbox.runCommand('exit', { context })).rejects.toBeInstanceOf(
      ContextRestartedError,
    );
  });
});
