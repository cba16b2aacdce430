import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount, type TestAccount } from '../support/api';
import { useStack } from '../support/use-stack';

/**
 * The `sandbox` command-line client (packages/cli), run as a user runs it (its built bin, in
 * a process of its own, not on a terminal) against the real stack.
 */
const t = useStack();
let account: TestAccount;
let scratch: string;
const BIN = join(__dirname, '../../packages/cli/bin/sandbox.js');

beforeAll(async () => {
  account = await createAccount(t.stack, 'paid');
  scratch = await mkdtemp(join(tmpdir(), 'sandbox-cli-'));
});

afterAll(() => rm(scratch, { recursive: true, force: true }));

/** Runs the CLI with `args` (and `input` on its standard input). */
function sandbox(
  args: string[],
  input = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: {
        PATH: process.env.PATH,
        SANDBOX_API_URL: `${t.stack.url}/v1`,
        SANDBOX_API_KEY: account.key,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const json = <T>(text: string) => JSON.parse(text) as T;

it('creates, lists, runs, execs, copies, opens, kills and removes', async () => {
  const created = await sandbox(['create', '--metadata', '{"from":"cli"}']);
  expect(created.code).toBe(0);
  const { sessionId, previewUrl } = json<{ sessionId: string; previewUrl: string }>(created.stdout);
  expect(sessionId).toMatch(/^ses_/);

  const listed = await sandbox(['ls']);
  expect(
    json<{ data: { sessionId: string }[] }>(listed.stdout).data.map((s) => s.sessionId),
  ).toContain(sessionId);

  // exec streams the command's own output and exits with its code.
  const exec = await sandbox(['exec', sessionId, '--', 'echo out; echo err >&2; exit 7']);
  expect([exec.code, exec.stdout, exec.stderr]).toEqual([7, 'out\n', 'err\n']);

  // run: code from standard input, in the session; --json prints the whole result.
  const run = await sandbox(
    ['run', '--session', sessionId, '--env', 'WHO=cli', '-'],
    'const n: number = 2; console.log(n * 21, process.env.WHO); process.exitCode = 3',
  );
  expect([run.code, run.stdout]).toEqual([3, '42 cli\n']);
  const asJson = await sandbox(['--json', 'exec', sessionId, '--', 'echo hi']);
  expect(json<{ stdout: string; exitCode: number }>(asJson.stdout)).toMatchObject({
    stdout: 'hi\n',
    exitCode: 0,
  });

  // cp: up and down again, by hash; ls of the session's files.
  const bytes = randomBytes(3_000_000);
  await writeFile(join(scratch, 'up.bin'), bytes);
  const up = await sandbox(['cp', join(scratch, 'up.bin'), `${sessionId}:data/up.bin`]);
  expect(up.code).toBe(0);
  expect(json<{ size: number }>(up.stdout).size).toBe(3_000_000);
  const down = await sandbox(['cp', `${sessionId}:data/up.bin`, join(scratch, 'down.bin')]);
  expect(down.code).toBe(0);
  const hash = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  expect(hash(await readFile(join(scratch, 'down.bin')))).toBe(hash(bytes));
  const files = await sandbox(['ls', `${sessionId}:data`]);
  expect(json<{ files: { path: string }[] }>(files.stdout).files.map((f) => f.path)).toEqual([
    'data/up.bin',
  ]);
  const cat = await sandbox(['cp', '-', `${sessionId}:note.txt`], 'from stdin');
  expect(cat.code).toBe(0);
  expect((await sandbox(['cp', `${sessionId}:note.txt`, '-'])).stdout).toBe('from stdin');

  expect((await sandbox(['open', sessionId])).stdout).toBe(`${previewUrl}\n`);
  expect((await sandbox(['open', sessionId, '--port', '8080'])).stdout).toBe(
    `${previewUrl.replace('://', '://8080-')}\n`,
  );

  await sandbox(['exec', sessionId, '--', 'nohup sleep 100 >/dev/null 2>&1 &']);
  const killed = await sandbox(['kill', sessionId]);
  expect(json<{ killed: number }>(killed.stdout).killed).toBeGreaterThanOrEqual(1);

  expect((await sandbox(['rm', sessionId])).code).toBe(0);
  const gone = await sandbox(['info', sessionId]);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toMatch(/session_not_found, request /);
});

it("lists a session's runs and prints one's output, or follows it live", async () => {
  const { sessionId } = json<{ sessionId: string }>((await sandbox(['create'])).stdout);
  await sandbox(['exec', sessionId, '--', 'echo kept; echo also >&2; exit 5']);
  const ps = json<{ pid: number; id: string; exitCode: number; command: string }[]>(
    (await sandbox(['ps', sessionId])).stdout,
  );
  expect(ps).toEqual([
    expect.objectContaining({ exitCode: 5, command: expect.stringContaining('echo kept') }),
  ]);
  const [run] = ps;
  const logs = await sandbox(['logs', sessionId, String(run?.pid)]);
  expect([logs.code, logs.stdout, logs.stderr]).toEqual([0, 'kept\n', 'also\n']);

  // -f: a run still going, followed to its end.
  const slow = sandbox([
    'exec',
    sessionId,
    '--',
    'for i in 1 2 3; do echo tick $i; sleep 0.3; done',
  ]);
  await new Promise((resolve) => setTimeout(resolve, 400));
  const running = json<{ id: string; state: string }[]>(
    (await sandbox(['ps', sessionId])).stdout,
  ).at(-1);
  expect(running?.state).toBe('running');
  const followed = await sandbox(['logs', '-f', sessionId, running?.id ?? '']);
  expect([followed.code, followed.stdout]).toEqual([0, 'tick 1\ntick 2\ntick 3\n']);
  await slow;
  await sandbox(['rm', sessionId]);
});

it('runs a file in a throwaway session, and exits 124 on a timeout', async () => {
  await writeFile(join(scratch, 'hello.ts'), 'const s: string = "hello"; console.log(s)');
  const before = json<{ pagination: { total: number } }>((await sandbox(['ls'])).stdout);
  const run = await sandbox(['run', join(scratch, 'hello.ts')]);
  expect([run.code, run.stdout]).toEqual([0, 'hello\n']);
  const after = json<{ pagination: { total: number } }>((await sandbox(['ls'])).stdout);
  expect(after.pagination.total).toBe(before.pagination.total); // removed afterwards

  const slow = await sandbox(
    ['run', '--timeout', '1', '-'],
    'console.log("a"); setTimeout(() => {}, 5000)',
  );
  expect([slow.code, slow.stdout]).toEqual([124, 'a\n']);
  expect(slow.stderr).toContain('timed out');
});

it('runs a terminal of the session: typed input, its output, the shell exit code', async () => {
  const { sessionId } = json<{ sessionId: string }>((await sandbox(['create'])).stdout);
  const term = await sandbox(['terminal', sessionId], 'echo "from the $TERM terminal"\nexit 6\n');
  expect(term.code).toBe(6);
  expect(term.stdout).toContain('from the xterm-256color terminal');
  await sandbox(['rm', sessionId]);
});

it('says how to use it, with exit code 2, on a bad command line', async () => {
  const bad = await sandbox(['frobnicate']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('unknown command frobnicate');
  expect(bad.stderr).toContain('Usage: sandbox');
  expect((await sandbox(['exec', 'ses_x'])).code).toBe(2);
  expect((await sandbox(['--help'])).code).toBe(0);
});
