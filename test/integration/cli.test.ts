import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount, type TestAccount } from '../support/api';
import { useStack } from '../support/use-stack';

/**
 * The `sandbox` command-line client (packages/cli), run as a user runs it (its built bin, in
 * a process of its own, not on a terminal: output is for people unless --json) against the
 * real stack.
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

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI started with `args` (`input` on its standard input, `env` over the account's). */
function start(args: string[], input = '', env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: {
      PATH: process.env.PATH,
      SANDBOX_API_URL: `${t.stack.url}/v1`,
      SANDBOX_API_KEY: account.key,
      ...env,
    },
  });
  const ran: Ran = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (ran.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (ran.stderr += chunk.toString()));
  const done = new Promise<Ran>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ ...ran, code }));
  });
  child.stdin.end(input);
  return { child, ran, done };
}

/** Runs the CLI with `args` to its end. */
function sandbox(args: string[], input = '', env: Record<string, string> = {}): Promise<Ran> {
  return start(args, input, env).done;
}

const json = <T>(text: string) => JSON.parse(text) as T;

/** `read()`'s first value that is not undefined, read again every 100 ms for `ms`. */
async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Run {
  pid: number;
  id: string;
  state: string;
  exitCode: number | null;
  command: string;
}

const runs = async (sessionId: string) =>
  json<Run[]>((await sandbox(['ps', sessionId, '--json'])).stdout);

/** The session's run of `command` once it runs. */
const running = (sessionId: string, command: string) =>
  until(`${command} to run`, async () =>
    (await runs(sessionId)).find((r) => r.command === command && r.state === 'running'),
  );

async function newSession(): Promise<string> {
  const created = await sandbox(['create']);
  expect(created.code).toBe(0);
  return created.stdout.trim();
}

const sessionCount = async () => json<unknown[]>((await sandbox(['ls', '--json'])).stdout).length;

it('creates, lists, runs, execs, copies, opens, kills and removes', async () => {
  const created = await sandbox(['create', '--metadata', '{"from":"cli"}', '--json']);
  expect(created.code).toBe(0);
  const { sessionId, previewUrl } = json<{ sessionId: string; previewUrl: string }>(created.stdout);
  expect(sessionId).toMatch(/^ses_/);

  // For people (a pipe is no reason for JSON): one line per session, its id first.
  const listed = await sandbox(['ls']);
  expect(listed.stdout.split('\n')).toContainEqual(expect.stringMatching(`^${sessionId}  `));
  const listedJson = json<{ sessionId: string }[]>((await sandbox(['ls', '--json'])).stdout);
  expect(listedJson.map((s) => s.sessionId)).toContain(sessionId);

  // exec runs exactly its argv (quoted for the shell), streams its output, exits with its code.
  const printf = await sandbox(['exec', sessionId, '--', 'printf', '[%s]\n', 'a b', "it's", '']);
  expect([printf.code, printf.stdout]).toEqual([0, "[a b]\n[it's]\n[]\n"]);
  const exec = await sandbox([
    'exec',
    sessionId,
    '--',
    'sh',
    '-c',
    'echo out; echo err >&2; exit 7',
  ]);
  expect([exec.code, exec.stdout, exec.stderr]).toEqual([7, 'out\n', 'err\n']);

  // run: code from standard input, in the session; --json prints the whole result.
  const run = await sandbox(
    ['run', '--session', sessionId, '--env', 'WHO=cli', '-'],
    'const n: number = 2; console.log(n * 21, process.env.WHO); process.exitCode = 3',
  );
  expect([run.code, run.stdout]).toEqual([3, '42 cli\n']);
  const asJson = await sandbox(['exec', '--json', sessionId, '--', 'echo', 'hi']);
  expect(json<{ stdout: string; exitCode: number }>(asJson.stdout)).toMatchObject({
    stdout: 'hi\n',
    exitCode: 0,
  });

  // cp: up and down again, by hash; ls of the session's files.
  const bytes = randomBytes(3_000_000);
  await writeFile(join(scratch, 'up.bin'), bytes);
  const up = await sandbox(['cp', '--json', join(scratch, 'up.bin'), `${sessionId}:data/up.bin`]);
  expect(up.code).toBe(0);
  expect(json<{ size: number }>(up.stdout).size).toBe(3_000_000);
  const down = await sandbox(['cp', `${sessionId}:data/up.bin`, join(scratch, 'down.bin')]);
  expect([down.code, down.stdout]).toEqual([0, `${join(scratch, 'down.bin')}: 3000000 bytes\n`]);
  const hash = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  expect(hash(await readFile(join(scratch, 'down.bin')))).toBe(hash(bytes));
  const files = await sandbox(['ls', `${sessionId}:data`, '--json']);
  expect(json<{ files: { path: string }[] }>(files.stdout).files.map((f) => f.path)).toEqual([
    'data/up.bin',
  ]);
  expect((await sandbox(['ls', `${sessionId}:data`])).stdout).toMatch(/ data\/up\.bin\n$/);
  const cat = await sandbox(['cp', '-', `${sessionId}:note.txt`], 'from stdin');
  expect(cat.code).toBe(0);
  expect((await sandbox(['cp', `${sessionId}:note.txt`, '-'])).stdout).toBe('from stdin');

  expect((await sandbox(['open', sessionId])).stdout).toBe(`${previewUrl}\n`);
  expect((await sandbox(['open', sessionId, '--port', '8080'])).stdout).toBe(
    `${previewUrl.replace('://', '://8080-')}\n`,
  );

  // kill needs a process or --all.
  await sandbox(['exec', sessionId, '--', 'sh', '-c', 'nohup sleep 100 >/dev/null 2>&1 &']);
  const bare = await sandbox(['kill', sessionId]);
  expect(bare.code).toBe(2);
  expect(bare.stderr).toContain('kill needs a process');
  const killed = await sandbox(['kill', sessionId, '--all', '--json']);
  expect(killed.code).toBe(0);
  expect(json<{ killed: number }>(killed.stdout).killed).toBeGreaterThanOrEqual(1);

  const removed = await sandbox(['rm', sessionId]);
  expect([removed.code, removed.stdout]).toEqual([0, `deleted ${sessionId}\n`]);
  const gone = await sandbox(['info', sessionId]);
  expect(gone.code).toBe(66);
  expect(gone.stderr).toMatch(/session_not_found, request /);
});

it("gives create's session lifetime (--ttl) and its runs' timeout (--run-timeout)", async () => {
  const created = await sandbox(['create', '--ttl', '600', '--run-timeout', '20', '--json']);
  expect(created.code).toBe(0);
  const { sessionId } = json<{ sessionId: string }>(created.stdout);
  const listed = json<
    {
      sessionId: string;
      createdAt: string;
      expiresAt: string;
      resourceLimits: { timeout: number };
    }[]
  >((await sandbox(['ls', '--json'])).stdout).find((s) => s.sessionId === sessionId);
  expect(listed?.resourceLimits.timeout).toBe(20);
  const lifetime = Date.parse(listed?.expiresAt ?? '') - Date.parse(listed?.createdAt ?? '');
  expect(Math.abs(lifetime - 600_000)).toBeLessThan(5_000);
  expect((await sandbox(['create', '--timeout', '20'])).code).toBe(2); // renamed
  await sandbox(['rm', sessionId]);
});

it("lists a session's runs and prints one's output, or follows it live", async () => {
  const sessionId = await newSession();
  await sandbox(['exec', sessionId, '--', 'sh', '-c', 'echo kept; echo also >&2; exit 5']);
  const ps = await runs(sessionId);
  expect(ps).toEqual([
    expect.objectContaining({ exitCode: 5, command: expect.stringContaining('echo kept') }),
  ]);
  const [run] = ps;
  const logs = await sandbox(['logs', sessionId, String(run?.pid)]);
  expect([logs.code, logs.stdout, logs.stderr]).toEqual([0, 'kept\n', 'also\n']);
  expect((await sandbox(['ps', sessionId])).stdout).toContain(`${run?.id}  exited 5`);

  // -f: a run still going, followed to its end.
  const ticks = 'for i in 1 2 3; do echo tick $i; sleep 0.3; done';
  const slow = sandbox(['exec', sessionId, '--', 'sh', '-c', ticks]);
  const going = await running(sessionId, `sh -c '${ticks}'`);
  const followed = await sandbox(['logs', '-f', sessionId, going.id]);
  expect([followed.code, followed.stdout]).toEqual([0, 'tick 1\ntick 2\ntick 3\n']);
  await slow;
  await sandbox(['rm', sessionId]);
});

it('kills one process by its pid or its process id', async () => {
  const sessionId = await newSession();
  const byPid = start(['exec', sessionId, '--', 'sleep', '31']);
  const first = await running(sessionId, 'sleep 31');
  const killed = await sandbox(['kill', sessionId, String(first.pid), '--json']);
  expect(killed.code).toBe(0);
  expect(json<{ pids: number[] }>(killed.stdout).pids).toContain(first.pid);
  expect((await byPid.done).code).not.toBe(0);

  const byId = start(['exec', sessionId, '--', 'sleep', '32']);
  const second = await running(sessionId, 'sleep 32');
  expect((await sandbox(['kill', sessionId, second.id])).code).toBe(0);
  expect((await byId.done).code).not.toBe(0);
  await sandbox(['rm', sessionId]);
});

it('runs a file in a throwaway session, and exits 124 on a timeout', async () => {
  await writeFile(join(scratch, 'hello.ts'), 'const s: string = "hello"; console.log(s)');
  const before = await sessionCount();
  const run = await sandbox(['run', join(scratch, 'hello.ts')]);
  expect([run.code, run.stdout]).toEqual([0, 'hello\n']);
  expect(await sessionCount()).toBe(before); // removed afterwards

  const slow = await sandbox(
    ['run', '--timeout', '1', '-'],
    'console.log("a"); setTimeout(() => {}, 5000)',
  );
  expect([slow.code, slow.stdout]).toEqual([124, 'a\n']);
  expect(slow.stderr).toContain('timed out');
});

it('runs piped entries in a REPL: in order, a multi-line one joined, no prompts, then gone', async () => {
  const sessionId = await newSession();
  const entries = [
    'const n: number = 2',
    'function times(k: number) {',
    '  return n * k',
    '}',
    "console.log('printed'); times(21)",
    "JSON.parse('{')",
  ];
  const repl = await sandbox(['repl', sessionId], `${entries.join('\n')}\n`);
  expect(repl.code).toBe(0);
  expect(repl.stdout).toBe('printed\n42\n');
  expect(repl.stderr).toMatch(/^Context ctx_[0-9a-f]{24} \(typescript, \/workspace\)/);
  expect(repl.stderr).toMatch(/^SyntaxError: .*JSON/m);
  // The context made for it was deleted as it ended.
  const listed = await fetch(`${t.stack.url}/v1/sessions/${sessionId}/contexts`, {
    headers: { authorization: `Bearer ${account.key}` },
  });
  expect(await listed.json()).toEqual({ contexts: [] });
  await sandbox(['rm', sessionId]);
});

// Ctrl-C, rm past ids already gone, the interactive terminal and REPL, exit codes per error class, usage,
// --version and each command's help: in a real terminal, as typed, in cli-tmux.test.ts.

it('forks a session: the forks’ ids on stdout, each with the source’s files', async () => {
  const sessionId = (await sandbox(['create'])).stdout.trim();
  await sandbox(['exec', sessionId, '--', 'sh', '-c', 'echo kept > kept.txt']);
  const forked = await sandbox(['fork', sessionId, '--count', '2']);
  expect(forked.code).toBe(0);
  const ids = forked.stdout.trim().split('\n');
  expect(ids).toHaveLength(2);
  expect(forked.stderr).toContain('processes kept: no');
  for (const id of ids) {
    expect(id).not.toBe(sessionId);
    expect((await sandbox(['exec', id, '--', 'cat', 'kept.txt'])).stdout).toBe('kept\n');
  }
  expect((await sandbox(['fork', sessionId, '--count', '11'])).code).toBe(2);
  expect((await sandbox(['rm', sessionId, ...ids])).code).toBe(0);
});

/** Waits until the CLI under way printed `text` on `stream`. */
const printed = (ran: Ran, stream: 'stdout' | 'stderr', text: string) =>
  until(`${JSON.stringify(text)} on ${stream}`, () =>
    Promise.resolve(ran[stream].includes(text) ? true : undefined),
  );

it("watches a directory's changes until Ctrl-C, and ends with its session", async () => {
  const sessionId = await newSession();
  await sandbox(['exec', sessionId, '--', 'mkdir', '-p', 'w/sub']);
  const interrupted = start(['watch', sessionId, 'w', '-r']);
  await printed(interrupted.ran, 'stderr', 'watching w');
  await sandbox(['exec', sessionId, '--', 'sh', '-c', 'touch w/sub/a && mv w/sub/a w/b']);
  await printed(interrupted.ran, 'stdout', 'w/b');
  interrupted.child.kill('SIGINT');
  const stopped = await interrupted.done;
  expect([stopped.code, stopped.stdout]).toEqual([
    130,
    'create  w/sub/a\nrename  w/sub/a -> w/b\n',
  ]);

  const held = start(['watch', sessionId, '--json']);
  await printed(held.ran, 'stderr', 'watching');
  await sandbox(['rm', sessionId]);
  const ended = await held.done;
  expect([ended.code, ended.stdout]).toEqual([1, '']);
  expect(ended.stderr).toContain('the session went away');
});
