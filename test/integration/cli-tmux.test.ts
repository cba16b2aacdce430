import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { OUTCOMES } from '../../packages/cli/src/exit-codes';
import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { useStack } from '../support/use-stack';

/**
 * The `sandbox` command-line client as a person uses it: typed into a shell in a real terminal
 * (a detached tmux session), read off its screen, against the real stack. Keys go in with
 * `tmux send-keys` (Ctrl-C too), the screen comes back with `tmux capture-pane`, and each
 * command's exit code is read as a person reads it: `echo "exit=$?"` typed after it.
 * cli.test.ts runs the same CLI as processes without a terminal.
 */
const t = useStack();
let api: ApiClient;
let scratch = '';
const BIN = join(__dirname, '../../packages/cli/bin/sandbox.js');
const PANE = 'cli';
/** The shell's prompt: its lines on the screen tell where each command began and ended. */
const PROMPT = 'cli-test$';
const made = new Set<string>();
// Each test types several commands and waits on sessions: more than the default on a busy machine.
jest.setTimeout(120_000);

const execFileAsync = promisify(execFile);

/** A command of this file's own tmux server (its socket in `scratch`), started by the first. */
async function tmux(...args: string[]): Promise<string> {
  const [socket, config] = [join(scratch, 'tmux.sock'), join(scratch, 'tmux.conf')];
  return (await execFileAsync('tmux', ['-S', socket, '-f', config, ...args])).stdout;
}

beforeAll(async () => {
  // No tmux is a failure, not a skip: scripts/test installs it.
  await execFileAsync('tmux', ['-V']);
  const account = await createAccount(t.stack, 'paid');
  api = t.as(account.key);
  scratch = await mkdtemp(join(tmpdir(), 'sandbox-cli-tmux-'));
  // `sandbox` on the PATH, as an installed bin (a shim that execs node) would be.
  await mkdir(join(scratch, 'bin'));
  const wrapper = join(scratch, 'bin', 'sandbox');
  await writeFile(wrapper, `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`);
  await chmod(wrapper, 0o755);
  await writeFile(join(scratch, 'tmux.conf'), 'set -g history-limit 100000\n');
  await writeFile(
    join(scratch, 'long.js'),
    'console.log("started"); setTimeout(() => {}, 300_000)',
  );
  const env = {
    PATH: `${join(scratch, 'bin')}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: scratch,
    HISTFILE: '', // no history written into scratch as the shell ends
    TERM: 'xterm-256color',
    LANG: 'C.UTF-8',
    PS1: `${PROMPT} `,
    SANDBOX_API_URL: `${t.stack.url}/v1`,
    SANDBOX_API_KEY: account.key,
  };
  // A clean environment: the shell sees only these variables (env -i), none of jest's.
  const shell = ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`)];
  shell.push('bash', '--norc', '--noprofile', '-i');
  await tmux('new-session', '-d', '-x', '120', '-y', '40', '-s', PANE, '-c', scratch, ...shell);
  await until('the first prompt', async () =>
    (await screen()).at(-1) === PROMPT ? true : undefined,
  );
});

afterAll(async () => {
  if (scratch === '') return; // nothing was started
  await tmux('kill-server').catch(() => undefined);
  // The server's shell may still be ending as kill-server returns.
  await rm(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

t.beforeStop(async () => {
  for (const id of made) await api.deleteSession(id);
});

/** The pane's whole text (history too), wrapped lines joined, without trailing blanks. */
async function screen(): Promise<string[]> {
  const text = await tmux('capture-pane', '-p', '-J', '-S', '-', '-E', '-', '-t', PANE);
  const lines = text.split('\n').map((line) => line.trimEnd());
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines;
}

/** `read()`'s first value that is not undefined, read again every 100 ms for `ms`. */
async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}; the screen:\n${(await screen()).join('\n')}`);
}

/** Types `line` and Enter; returns where it was typed (the screen's line of the prompt). */
async function type(line: string): Promise<number> {
  const at = (await screen()).length - 1;
  await tmux('send-keys', '-t', PANE, '-l', line);
  await tmux('send-keys', '-t', PANE, 'Enter');
  return at;
}

/** The screen from line `at` on, once `test` accepts it. */
async function seen(at: number, what: string, test: (text: string) => boolean, ms = 30_000) {
  return until(
    what,
    async () => {
      const text = (await screen()).slice(at).join('\n');
      return test(text) ? text : undefined;
    },
    ms,
  );
}

const prompts = (text: string) => text.split(PROMPT).length - 1;

/** What the command typed at line `at` printed, once the shell's prompt is back. */
async function output(at: number, ms = 60_000): Promise<string> {
  const text = await seen(at, 'the prompt to come back', (s) => prompts(s) >= 2, ms);
  const start = text.indexOf('\n') + 1;
  return start === 0 ? '' : text.slice(start, text.lastIndexOf(PROMPT));
}

/** The exit code of the last command, as `echo "exit=$?"` prints it. */
async function exitCode(): Promise<number> {
  const at = await type('echo "exit=$?"');
  const text = await seen(at, 'exit=N', (s) => /^exit=\d+$/m.test(s) && prompts(s) >= 2);
  return Number(/^exit=(\d+)$/m.exec(text)?.[1]);
}

/** Types `line`, waits for it to end: what it printed (stdout and stderr) and its exit code. */
async function sh(line: string, ms?: number): Promise<{ out: string; code: number }> {
  const out = await output(await type(line), ms);
  return { out, code: await exitCode() };
}

const SESSION_LINE = /^ses_[A-Za-z0-9_-]+$/m;

/** A session made by typing `sandbox create`, its id read off the screen. */
async function created(): Promise<string> {
  const { out, code } = await sh('sandbox create');
  expect(code).toBe(0);
  const id = SESSION_LINE.exec(out)?.[0] ?? '';
  expect(id).not.toBe('');
  made.add(id);
  return id;
}

/** The account's sessions, through the API. */
async function sessionIds(): Promise<string[]> {
  const listed = await api.get<{ data: { sessionId: string }[] }>('/v1/sessions?limit=100');
  return listed.body.data.map((s) => s.sessionId).sort();
}

/** The command lines of the session's processes, read from /proc through the API. */
async function remoteCommands(sessionId: string): Promise<string[]> {
  const listing = "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done";
  const ran = await api.execute<{ stdout: string }>(sessionId, { command: listing });
  const lines = ran.body.stdout.split('\n');
  expect(lines).toContainEqual(expect.stringContaining('/proc/')); // the listing itself
  return lines;
}

it('prints its version and, per command, its help with examples', async () => {
  const { version } = JSON.parse(
    await readFile(join(__dirname, '../../packages/cli/package.json'), 'utf8'),
  ) as { version: string };
  expect(await sh('sandbox --version')).toEqual({ out: `${version}\n`, code: 0 });
  const help = await sh('sandbox exec --help');
  expect(help.code).toBe(0);
  expect(help.out).toContain('Usage: sandbox exec');
  expect(help.out).toContain('Examples:');
  expect(help.out).toMatch(/^ {2}\$ sandbox exec ses_… -- /m);
});

it('prints for people on a terminal and in a pipe, and JSON only with --json', async () => {
  const { out } = await sh('sandbox create');
  const id = SESSION_LINE.exec(out)?.[0] ?? '';
  made.add(id);
  expect(id).not.toBe('');
  expect(out).not.toContain('{');
  expect(out).toContain('preview: http');

  const grepped = await sh(`sandbox ls | grep ${id}`);
  expect(grepped.code).toBe(0);
  expect(grepped.out).toMatch(new RegExp(`^${id} {2}\\w+ +expires \\S+\\n$`));

  const listed = await sh('sandbox ls --json');
  expect(listed.code).toBe(0);
  const sessions = JSON.parse(listed.out) as { sessionId: string }[];
  expect(sessions.map((s) => s.sessionId)).toContain(id);
});

it("prints a private preview's header at create, and again at open", async () => {
  const { out, code } = await sh('sandbox create --private-preview');
  expect(code).toBe(0);
  const id = SESSION_LINE.exec(out)?.[0] ?? '';
  made.add(id);
  const header = /^preview header: (x-preview-token: \S+)$/m.exec(out)?.[1];
  expect(header).toBeDefined();
  const opened = await sh(`sandbox open ${id}`);
  expect(opened.code).toBe(0);
  expect(opened.out.split('\n')).toEqual([expect.stringMatching(/^http/), header, '']);
});

it("keeps exec's arguments as typed: the shell's quoting reaches the session's", async () => {
  const id = await created();
  const quoted = await sh(`sandbox exec ${id} -- sh -c 'echo "a  b"; echo $((2+3))'`);
  expect(quoted).toEqual({ out: 'a  b\n5\n', code: 0 });
});

it('at Ctrl-C during exec exits 130 at once, and the remote process is gone', async () => {
  const id = await created();
  const at = await type(`sandbox exec ${id} -- sh -c 'echo started; sleep 300'`);
  await seen(at, 'the run to start', (s) => /^started$/m.test(s), 60_000);
  const pressed = Date.now();
  await tmux('send-keys', '-t', PANE, 'C-c');
  const out = await output(at, 20_000);
  expect(Date.now() - pressed).toBeLessThan(10_000);
  expect(out).toContain('sandbox: interrupted');
  expect(await exitCode()).toBe(OUTCOMES.interrupted.code);

  const ps = await sh(`sandbox ps ${id}`);
  expect(ps.out).toMatch(/ exited /);
  expect(ps.out).not.toMatch(/ running /);
  await until('the remote sleep to be gone', async () =>
    (await remoteCommands(id)).some((line) => line.includes('sleep 300')) ? undefined : true,
  );
});

it('at Ctrl-C during run exits 130 and deletes its throwaway session', async () => {
  const before = await sessionIds();
  const at = await type('sandbox run long.js');
  await seen(at, 'the run to start', (s) => /^started$/m.test(s), 60_000);
  expect((await sessionIds()).length).toBe(before.length + 1);
  await tmux('send-keys', '-t', PANE, 'C-c');
  await output(at, 30_000);
  expect(await exitCode()).toBe(OUTCOMES.interrupted.code);
  expect(await sessionIds()).toEqual(before);
});

it('refuses kill without a pid or --all; rm goes on past an id already gone', async () => {
  const id = await created();
  const bare = await sh(`sandbox kill ${id}`);
  expect(bare.code).toBe(OUTCOMES.usage.code);
  expect(bare.out).toContain('sandbox: kill needs a process (a pid or a proc_ id), or --all');

  const gone = await api.createSession();
  await api.deleteSession(gone);
  const removed = await sh(`sandbox rm ${gone} ${id}`);
  expect(removed.code).toBe(OUTCOMES.ok.code);
  expect(removed.out).toContain(`sandbox: ${gone} was already gone\n`);
  expect(removed.out).toContain(`deleted ${id}\n`);
  expect(await sessionIds()).not.toContain(id);
});

it('exits with the code of each class of error, as exit-codes.ts lists them', async () => {
  const badKey = await sh('SANDBOX_API_KEY=sk_live_not_a_key sandbox ls');
  expect(badKey.code).toBe(OUTCOMES.auth.code);
  expect(badKey.out).toMatch(/^sandbox: .*\(unauthorized/m);
  const unreachable = await sh('sandbox --api-url http://127.0.0.1:9/v1 ls');
  expect(unreachable.code).toBe(OUTCOMES.unavailable.code);
  const gone = await api.createSession();
  await api.deleteSession(gone);
  expect((await sh(`sandbox info ${gone}`)).code).toBe(OUTCOMES.notFound.code);
  expect((await sh('sandbox frobnicate')).code).toBe(OUTCOMES.usage.code);
});

it("runs an interactive terminal of the session: typed keys, its screen, back to one's shell", async () => {
  const id = await created();
  const at = await type(`sandbox terminal ${id}`);
  // The session's shell prompts on the line after the command typed.
  await seen(at, "the session shell's prompt", (s) => /\n.*\S/.test(s), 60_000);
  await type('echo $((6*7))');
  await seen(at, '42', (s) => /^42$/m.test(s));
  // Its size is this terminal's, and follows it when it changes.
  await type('stty size');
  await seen(at, 'the size', (s) => /^40 120$/m.test(s));
  await tmux('resize-window', '-t', PANE, '-x', '100', '-y', '30');
  await type('while [ "$(stty size)" != "30 100" ]; do sleep 0.1; done; echo resized-$((3*3))');
  await seen(at, 'the new size', (s) => /^resized-9$/m.test(s));
  // Raw mode: Ctrl-C goes to the session's shell (it ends its sleep), not to the CLI.
  const sleeps = async (yes: boolean) =>
    (await remoteCommands(id)).some((line) => line.includes('sleep 301')) === yes || undefined;
  await type('sleep 301; echo after-sleep');
  await until('the sleep to run', () => sleeps(true));
  await tmux('send-keys', '-t', PANE, 'C-c');
  await until('the sleep to end', () => sleeps(false));
  await type('echo still-$((2*3))');
  const text = await seen(at, 'the terminal to go on', (s) => /^still-6$/m.test(s));
  expect(text).not.toMatch(/^after-sleep$/m);
  expect(prompts(text)).toBe(1); // still in the session's shell, not back in ours
  await type('exit');
  await output(at, 30_000);
  expect(await exitCode()).toBe(0);
  // This terminal is back as it was (not left raw): the line discipline echoes, edits lines.
  const { out } = await sh('stty -a');
  expect(out).toMatch(/(^|\s)icanon(\s|$)/m);
  expect(out).toMatch(/(^|\s)echo(\s|$)/m);
});

/** The REPL's prompt, as the screen shows it (trailing blanks trimmed). */
const REPL_PROMPT = 'ts>';

/** Types an entry into the REPL; the screen from it once the REPL prompts again and `test` holds. */
async function entry(line: string, test: (text: string) => boolean = () => true, ms = 60_000) {
  const at = await type(line);
  const prompted = (s: string) => s.split('\n').length > 1 && s.endsWith(`\n${REPL_PROMPT}`);
  return seen(at, `the REPL to answer ${line}`, (s) => prompted(s) && test(s), ms);
}

it('runs a REPL on a code context: state, multi-line entries, values, errors, Ctrl-C, history', async () => {
  const id = await api.createSession();
  made.add(id);
  const at = await type(`sandbox repl ${id}`);
  await seen(at, 'the REPL prompt', (s) => s.endsWith(`\n${REPL_PROMPT}`), 60_000);
  // (No line ends with ';': tmux would take it for the end of its own command.)
  await entry('const xs: number[] = [1, 2, 3]');
  // An open brace continues on the next line, as does a trailing operator.
  await type('function total(list: number[]) {');
  // Node 24's REPL edits a multi-line entry as one, its lines after the first led by "|";
  // Node 20 and 22 print "..." (the CLI runs on the user's Node).
  await seen(at, 'the continuation prompt', (s) => /\n(\.\.\.|\|)$/.test(s));
  await type('  return list.reduce((sum, x) => sum +');
  await type('    x, 0)');
  expect(await entry('}')).not.toMatch(/Error/);
  expect(await entry('total(xs) * 7')).toMatch(/^42$/m);
  expect(await entry("display({ 'text/html': '<b>hi</b>' }); 'shown'")).toMatch(
    /^\[text\/html, 9 B: not shown in a terminal\]\n'shown'$/m,
  );
  const thrown = await entry("throw new RangeError('bad ' + xs.length)");
  expect(thrown).toMatch(/^RangeError: bad 3$/m);
  expect(thrown).toMatch(/^ {4}at .*<cell-\d+>:1:\d+/m);
  const printed = await entry(
    "console.log('printed'); await new Promise((r) => setTimeout(r, 50)); xs.length",
  );
  expect(printed).toMatch(/^printed\n3$/m);

  // Ctrl-C stops an entry that never ends; the context restarts, and the REPL goes on.
  const looping = await type('while (true) {}');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect((await screen()).at(-1)).not.toBe(REPL_PROMPT);
  await tmux('send-keys', '-t', PANE, 'C-c');
  await seen(
    looping,
    'the interrupt',
    (s) => /^Interrupted: the cell was stopped/m.test(s) && s.endsWith(`\n${REPL_PROMPT}`),
  );
  expect(await entry('typeof xs')).toMatch(/^'undefined'$/m);
  await type('.exit');
  await output(at, 30_000);
  expect(await exitCode()).toBe(0);
  // The context made for the REPL is gone, and the entries are in the history.
  const contexts = await api.get<{ contexts: unknown[] }>(`/v1/sessions/${id}/contexts`);
  expect(contexts.body.contexts).toEqual([]);
  const history = await readFile(join(scratch, '.config/sandbox/repl_history'), 'utf8');
  expect(history).toContain('total(xs) * 7');

  // A new REPL recalls them (Up), on a context that exists (--context); Ctrl-D leaves.
  const made2 = await api.post<{ contextId: string }>(`/v1/sessions/${id}/contexts`, {});
  const again = await type(`sandbox repl --context ${made2.body.contextId} ${id}`);
  await seen(again, 'the REPL prompt', (s) => s.endsWith(`\n${REPL_PROMPT}`), 60_000);
  await tmux('send-keys', '-t', PANE, 'Up', 'Up');
  await seen(again, 'the entry recalled', (s) => s.endsWith(`${REPL_PROMPT} typeof xs`));
  // Ctrl-C at the prompt clears the line (the entry is not run); Ctrl-D on an empty one leaves.
  await tmux('send-keys', '-t', PANE, 'C-c');
  await seen(again, 'the line cleared', (s) =>
    s.endsWith(`${REPL_PROMPT} typeof xs\n${REPL_PROMPT}`),
  );
  await tmux('send-keys', '-t', PANE, 'C-d');
  await output(again, 30_000);
  expect(await exitCode()).toBe(0);
  const left = await api.get<{ contexts: { contextId: string }[] }>(`/v1/sessions/${id}/contexts`);
  expect(left.body.contexts.map((c) => c.contextId)).toEqual([made2.body.contextId]);
  expect((await sh(`sandbox repl --context ctx_${'0'.repeat(24)} ${id}`)).code).toBe(
    OUTCOMES.notFound.code,
  );
});
