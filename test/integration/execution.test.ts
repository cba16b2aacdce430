import { createAccount } from '../support/api';
import { useStackWithAccount } from '../support/use-stack';

// Streams keep alive after 3 s of silence here, not 15: the keep-alive test waits for it.
const t = useStackWithAccount('paid', {
  session: true,
  stack: { gatewayEnv: { SSE_KEEP_ALIVE_S: '3' } },
});

const execute = (body: Record<string, unknown>, id = t.sessionId) => t.api.execute(id, body);

/** Asks for a run with `files`, which must be refused whole: 400 invalid_path (with `details`). */
async function expectFilesRefused(
  files: { path: string; content: string }[],
  details?: Record<string, unknown>,
): Promise<void> {
  const run = await execute({ files, command: 'true' });
  expect(run.status).toBe(400);
  expect(run.body).toMatchObject({
    error: { code: 'invalid_path', ...(details ? { details } : {}) },
  });
}

describe('code runs', () => {
  it('runs TypeScript as an ES module with top-level await, require and relative imports', async () => {
    const run = await execute({
      files: [
        {
          path: 'lib/greet.ts',
          content: 'export const greet = (n: string): string => `hello ${n}`;\n',
        },
      ],
      code: [
        "import { greet } from './lib/greet.ts';",
        "const os = require('node:os');",
        'const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));',
        'await wait(10);',
        "console.log(greet('ts'), typeof os.cpus, __dirname);",
        "console.error('to stderr');",
      ].join('\n'),
    });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({
      stdout: 'hello ts function /workspace\n',
      stderr: 'to stderr\n',
      exitCode: 0,
      timedOut: false,
    });
    expect(run.body.filesWritten).toEqual(['lib/greet.ts']);
  });

  it('imports .ts default exports, ES module .js and CommonJS files together', async () => {
    const run = await execute({
      workingDir: 'mixed',
      files: [
        { path: 'mixed/lib/a.js', content: 'export const a = 1;\n' },
        { path: 'mixed/lib/double.ts', content: 'export default (n: number): number => n * 2;\n' },
        {
          path: 'mixed/lib/greeter.ts',
          content: "export default class Greeter {\n  hi(): string { return 'hi'; }\n}\n",
        },
        {
          path: 'mixed/lib/legacy.cjs',
          content: "module.exports = { kind: typeof require('node:os').cpus };\n",
        },
      ],
      code: [
        "import { a } from './lib/a.js';",
        "import double from './lib/double.ts';",
        "import Greeter from './lib/greeter';",
        "import legacy from './lib/legacy.cjs';",
        'console.log(a, double(21), new Greeter().hi(), legacy.kind);',
      ].join('\n'),
    });
    expect(run.body).toMatchObject({ stdout: '1 42 hi function\n', stderr: '', exitCode: 0 });
  });

  it('runs ES module code that declares its own require, __filename and __dirname', async () => {
    const run = await execute({
      code: [
        "import { createRequire } from 'node:module';",
        "import { fileURLToPath } from 'node:url';",
        "import path from 'node:path';",
        'const require = createRequire(import.meta.url);',
        'const __filename = fileURLToPath(import.meta.url);',
        'const __dirname = path.dirname(__filename);',
        "console.log(typeof require('node:os').cpus, __dirname);",
      ].join('\n'),
    });
    expect(run.body).toMatchObject({ stdout: 'function /workspace\n', exitCode: 0 });
  });

  it('gives __dirname and __filename to the code, never to the packages it imports', async () => {
    const run = await execute({
      workingDir: 'probe-app',
      files: [
        {
          path: 'probe-app/node_modules/probe/package.json',
          content: '{"name":"probe","type":"module","main":"index.js"}',
        },
        {
          path: 'probe-app/node_modules/probe/index.js',
          content: 'export const seen = [typeof __dirname, typeof __filename].join();\n',
        },
      ],
      code: "import { seen } from 'probe';\nconsole.log(seen, __dirname);",
    });
    expect(run.body).toMatchObject({
      stdout: 'undefined,undefined /workspace/probe-app\n',
      exitCode: 0,
    });
  });

  it('bounds the time spent reading imported files by the run timeout', async () => {
    // A FIFO that nobody writes to: reading it blocks for ever.
    await execute({ command: 'mkfifo -m 600 never.ts' });
    const run = await execute({ code: "import x from './never.ts';\nconsole.log(x);", timeout: 2 });
    expect(run.status).toBe(408);
    expect(run.body).toMatchObject({ error: { code: 'execution_timeout' } });
    // Unblock whatever still waits on it, and the session goes on.
    const after = await execute({
      command: 'timeout 2 sh -c "echo > never.ts"; rm -f never.ts; echo ok',
    });
    expect(after.body.stdout).toBe('ok\n');
  });

  it('reports a thrown error with a non-zero exit code and the line of the user code', async () => {
    const run = await execute({ code: "const x = 1;\nthrow new Error('boom ' + x);" });
    expect(run.body.exitCode).not.toBe(0);
    expect(run.body.stderr).toContain('boom 1');
    expect(run.body.stderr).toMatch(/\.mts:2/);
  });

  it('runs JavaScript in a working directory', async () => {
    const run = await execute({
      files: [{ path: 'app/data.json', content: '{"n": 41}' }],
      workingDir: 'app',
      code: "import data from './data.json' with { type: 'json' };\nconsole.log(data.n + 1, process.cwd());",
    });
    expect(run.body).toMatchObject({ stdout: '42 /workspace/app\n', exitCode: 0 });
  });
});

describe('files in execute', () => {
  it('writes binary and text files before the run and lists what the run wrote', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
    const run = await execute({
      files: [
        { path: 'in/a.bin', content: bytes.toString('base64'), encoding: 'base64' },
        { path: 'in/b.txt', content: 'héllo' },
      ],
      command:
        'od -An -tu1 in/a.bin | tr -s " "; cat in/b.txt; echo; echo out > made.txt; mkdir -p d && echo x > d/y.txt',
    });
    expect(run.body.stdout).toBe(' 0 1 2 250 251 252\nhéllo\n');
    expect(run.body.filesWritten).toEqual(['in/a.bin', 'in/b.txt', 'd/y.txt', 'made.txt']);
  });

  it('writes all files or none', async () => {
    await expectFilesRefused(
      [
        { path: 'atomic/one.txt', content: '1' },
        { path: '../escape.txt', content: '2' },
      ],
      { path: '../escape.txt' },
    );
    const check = await execute({
      command: 'ls atomic 2>&1 || true; ls -a /workspace | grep -c tmp || true',
    });
    expect(check.body.stdout).toContain('No such file');
  });

  it('leaves no directory behind when a later file is refused in the sandbox', async () => {
    await execute({ command: 'ln -sfn /etc leads-out' });
    await expectFilesRefused([
      { path: 'made/for/one.txt', content: '1' },
      { path: 'leads-out/x.txt', content: '2' },
    ]);
    await expectFilesRefused(
      [
        { path: 'nest', content: 'a file' },
        { path: 'nest/inner.txt', content: 'and a directory' },
      ],
      { path: 'nest' },
    );
    const check = await execute({ command: 'ls -d made nest 2>&1 | grep -c "No such" ' });
    expect(check.body.stdout).toBe('2\n');
  });

  it('keeps the mode of a file it replaces', async () => {
    await execute({ command: "printf '#!/bin/sh\\necho old\\n' > tool.sh && chmod 755 tool.sh" });
    const run = await execute({
      files: [{ path: 'tool.sh', content: '#!/bin/sh\necho new\n' }],
      command: './tool.sh',
    });
    expect(run.body).toMatchObject({ stdout: 'new\n', exitCode: 0 });
  });

  it('refuses a file over the plan limit with 413 file_too_large', async () => {
    const free = t.as((await createAccount(t.stack, 'free')).key);
    const big = 'a'.repeat(10 * 1024 * 1024 + 1);
    const run = await free.execute(await free.createSession(), {
      command: 'true',
      files: [{ path: 'big.txt', content: big }],
    });
    expect(run.status).toBe(413);
    expect(run.body).toMatchObject({
      error: { code: 'file_too_large', details: { path: 'big.txt', size: 10 * 1024 * 1024 + 1 } },
    });
  });
});

describe('measurement', () => {
  it('reports the peak memory of a run that touches 150 MB, and its CPU time', async () => {
    const run = await execute({
      code: 'const b = Buffer.alloc(150 * 1024 * 1024, 1);\nlet s = 0; for (let i = 0; i < b.length; i += 4096) s += b[i];\nconsole.log(s > 0);',
    });
    expect(run.body.stdout).toBe('true\n');
    expect(run.body.memoryUsed).toBeGreaterThanOrEqual(150 * 1024 * 1024);
    expect(run.body.cpuTime).toBeGreaterThan(0);
  });

  it('counts CPU time of busy child processes', async () => {
    const fast = await t.api.createSession({ resourceLimits: { cpu: 2 } });
    // Each child spins, then prints the CPU time it used itself (utime + stime, in ticks of
    // 10 ms), so that the comparison holds however loaded the machine is.
    const child =
      'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; ' +
      'read -r -a s </proc/$BASHPID/stat; echo $(( (s[13] + s[14]) * 10 ))';
    const run = await execute({ command: `(${child}) & (${child}) & wait` }, fast);
    const own = (run.body.stdout as string).trim().split('\n').map(Number);
    expect(own).toHaveLength(2);
    const children = (own[0] ?? 0) + (own[1] ?? 0);
    expect(children).toBeGreaterThan(100);
    // Uncounted children would leave the parent's wait at nearly nothing.
    expect(run.body.cpuTime).toBeGreaterThanOrEqual(children * 0.9);
  });
});

describe('output', () => {
  it('streams the first chunk long before a slow run ends', async () => {
    const started = Date.now();
    const response = await t.api.executeStream(t.sessionId, {
      command: 'echo first; sleep 3; echo second',
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let firstAt: number | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value as Uint8Array, { stream: true });
      if (firstAt === undefined && text.includes('first')) firstAt = Date.now() - started;
    }
    const endedAt = Date.now() - started;
    expect(firstAt).toBeDefined();
    expect(endedAt - firstAt!).toBeGreaterThan(2000);
    expect(text).toContain('second');
  });

  it('sends a keep-alive comment after its interval of silence, not while output flows', async () => {
    // This file's interval is 3 s (SSE_KEEP_ALIVE_S, 15 by default): output every half second
    // for 4.5 s, then 4.5 s of silence, which holds one comment and not a second.
    const response = await t.api.executeStream(t.sessionId, {
      command: 'for i in $(seq 9); do echo $i; sleep 0.5; done; sleep 4.5; echo end',
      timeout: 60,
    });
    const text = await response.text();
    expect(text.match(/^: keep-alive$/gm)).toHaveLength(1);
    const comment = text.indexOf(': keep-alive');
    expect(comment).toBeGreaterThan(text.indexOf('"data":"9\\n"'));
    expect(comment).toBeLessThan(text.indexOf('"data":"end\\n"'));
  });

  it('answers a request refused before the run starts with a JSON error, not a stream', async () => {
    await execute({ command: 'ln -sfn /etc outside-link; echo x > plain-file' });
    const badFile = await execute({
      stream: true,
      files: [{ path: 'outside-link/x.txt', content: 'no' }],
      command: 'echo never',
    });
    expect(badFile.status).toBe(400);
    expect(badFile.body).toMatchObject({
      error: { code: 'invalid_path', details: { path: 'outside-link/x.txt' } },
    });
    // A workingDir through a link that leads out is refused, and nothing is made out there.
    await execute({ command: 'ln -sfn /tmp leads-to-tmp' });
    const outside = await execute({ workingDir: 'leads-to-tmp/made-here/deep', command: 'pwd' });
    expect(outside.status).toBe(400);
    expect((await execute({ command: 'ls /tmp/made-here 2>&1 || true' })).body.stdout).toContain(
      'No such file',
    );
    for (const program of [{ command: 'pwd' }, { code: 'console.log(1)' }]) {
      const badDir = await execute({ stream: true, workingDir: 'plain-file', ...program });
      expect(badDir.status).toBe(400);
      expect(badDir.body).toMatchObject({ error: { code: 'invalid_path' } });
      const plain = await execute({ workingDir: '/workspace/plain-file', ...program });
      expect(plain.status).toBe(400);
      expect(plain.body).toMatchObject({ error: { code: 'invalid_path' } });
    }
  });

  it('caps the output of a non-streamed run at 16 MB and says so', async () => {
    const run = await execute({
      command: 'head -c 20000000 /dev/zero | tr "\\0" a; echo done >&2',
    });
    expect(run.status).toBe(200);
    expect((run.body.stdout as string).length).toBe(16 * 1024 * 1024);
    expect(run.body.stderr).toBe('done\n');
    expect(run.body.outputTruncated).toBe(true);
  });
});

describe('processes', () => {
  it('keeps a background server alive for later runs, and returns at once', async () => {
    const started = Date.now();
    const run = await execute({
      command:
        "node -e \"require('http').createServer((q, s) => s.end('pong')).listen(8000)\" & sleep 0.5; echo started",
    });
    expect(run.body.stdout).toBe('started\n');
    expect(Date.now() - started).toBeLessThan(3000);
    const later = await execute({
      command: 'for i in $(seq 100); do curl -s localhost:8000 && break; sleep 0.1; done',
    });
    expect(later.body.stdout).toBe('pong');
  });

  it('kills one process, then all, with the kill result of 2.10', async () => {
    const id = await t.api.createSession();
    const started = await execute(
      {
        command:
          'nohup sleep 300 >/dev/null 2>&1 & echo $!; nohup sleep 301 >/dev/null 2>&1 & echo $!',
      },
      id,
    );
    const [first, second] = (started.body.stdout as string).trim().split('\n').map(Number);
    const kill = (pid?: number) => t.api.kill(id, pid);
    const one = await kill(first);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ killed: 1, pids: [first] });
    const info = await t.api.session(id);
    expect(info.body.activeProcesses).toBe(1);
    const all = await kill();
    expect(all.body).toEqual({ killed: 1, pids: [second] });
    const missing = await kill(99_999);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'process_not_found' } });
    // The shells armed for the next runs (ADR 48) were neither counted nor killed above; the
    // user's own kill of everything takes them too, and the next runs still run.
    expect((await execute({ command: 'kill -9 -1' }, id)).body).toMatchObject({ exitCode: 0 });
    for (const word of ['once', 'twice']) {
      const next = await execute({ command: `echo ${word}` }, id);
      expect(next.body).toMatchObject({ stdout: `${word}\n`, exitCode: 0 });
    }
  });

  it('kills a process with its children, even those in a session of their own', async () => {
    const started = await execute({
      command:
        "nohup bash -c 'setsid sleep 1101 & sleep 1102 & wait' >/dev/null 2>&1 & echo $!; sleep 0.3",
    });
    const parent = Number((started.body.stdout as string).trim());
    const kill = await t.api.kill(t.sessionId, parent);
    expect(kill.status).toBe(200);
    expect(kill.body.killed).toBe(3);
    expect(kill.body.pids).toContain(parent);
    const check = await execute({ command: "pgrep -f 'sleep 110[12]' || echo gone" });
    expect(check.body.stdout).toBe('gone\n');
  });

  it('kills the whole tree of a timed-out run, even children in a session of their own', async () => {
    const run = await execute({
      command:
        'setsid sleep 1201 & setsid bash -c "sleep 1202" & ' +
        // A detached child whose parent is gone: no longer in the tree at all.
        "node -e \"require('child_process').spawn('sleep', ['1203'], { detached: true, stdio: 'ignore' }).unref()\"; " +
        'echo partial; sleep 60',
      timeout: 2,
    });
    expect(run.status).toBe(408);
    expect(run.body).toMatchObject({
      error: { code: 'execution_timeout', stdout: 'partial\n', details: { timeout: 2 } },
    });
    const check = await execute({ command: "pgrep -f 'sleep 120[123]' || echo gone" });
    expect(check.body.stdout).toBe('gone\n');
  });

  it('refuses a pid no process can have, and a command with a NUL byte', async () => {
    const kill = await t.api.kill(t.sessionId, 4_294_967_506);
    expect(kill.status).toBe(400);
    const nul = await execute({ command: 'echo a\u0000b' });
    expect(nul.status).toBe(400);
    expect(nul.body).toMatchObject({
      error: { code: 'invalid_request', details: { field: 'command' } },
    });
  });

  it('keeps a run whose client went away running (it outlives its connection) until killed', async () => {
    const controller = new AbortController();
    const response = await t.api.executeStream(
      t.sessionId,
      { command: 'echo up; sleep 1002; echo never' },
      controller.signal,
    );
    const pid = Number(response.headers.get('x-process-pid'));
    expect(pid).toBeGreaterThan(0);
    expect(response.headers.get('x-process-id')).toMatch(/^proc_[a-f0-9]{16}$/);
    await response.body?.getReader().read();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const alive = await execute({ command: "pgrep -f 'sleep 100[2]' >/dev/null && echo alive" });
    expect(alive.body.stdout).toBe('alive\n');
    const killed = await t.api.kill(t.sessionId, pid);
    expect(killed.body).toMatchObject({ pids: expect.arrayContaining([pid]) });
    const gone = await execute({ command: "pgrep -f 'sleep 100[2]' || echo gone" });
    expect(gone.body.stdout).toBe('gone\n');
  });
});
