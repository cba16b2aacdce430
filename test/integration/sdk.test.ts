import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  AbortedError,
  ClientTimeoutError,
  ExecutionTimeoutError,
  FileNotFoundError,
  ForbiddenError,
  InvalidPathError,
  InvalidRequestError,
  ProcessNotFoundError,
  RateLimitedError,
  Sandbox,
  ServiceUnavailableError,
  SessionNotFoundError,
  UnauthorizedError,
  type ExecutionEvent,
} from '@sandbox/sdk';
import { createAccount, type TestAccount } from '../support/api';
import { cuttingProxy, scriptedProxy, silentServer } from '../support/gateway-proxies';
import { previewRequest, startPreviewApp } from '../support/preview-app';
import { refused, SocketTerminal } from '../support/terminal-socket';
import { BUN, DENO, denoRun, runWithSdk, SDK_DIST, useScratch } from '../support/sdk-runtimes';
import { useStack } from '../support/use-stack';

/**
 * The TypeScript SDK (packages/sdk) against the real stack: every method, streaming with an
 * early break, cancellation, retries through a proxy that answers 503 and 429, idempotent
 * creates, errors as classes, a large file by hash, and both of its builds.
 */
const t = useStack({ edge: true });
let paid: TestAccount;
const client = () => ({ apiKey: paid.key, apiUrl: `${t.stack.url}/v1` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  paid = await createAccount(t.stack, 'paid');
});

/** Whether `path` exists in the session, asked through the SDK. */
const exists = async (sandbox: Sandbox, path: string) =>
  (await sandbox.exec(`test -e ${path}`)).exitCode === 0;

describe('sessions', () => {
  it('creates, reads, lists, connects to and deletes a session', async () => {
    const sandbox = await Sandbox.create({ ...client(), metadata: { owner: 'sdk-test' } });
    expect(sandbox.id).toMatch(/^ses_[a-z0-9]{24}$/);
    const info = await sandbox.info();
    expect(info).toMatchObject({
      sessionId: sandbox.id,
      state: 'active',
      metadata: { owner: 'sdk-test' },
    });
    const page = await Sandbox.list({ ...client(), limit: 100 });
    expect(page.data.map((s) => s.sessionId)).toContain(sandbox.id);

    const again = await Sandbox.connect(sandbox.id, client());
    expect(again.previewUrl()).toBe(sandbox.previewUrl());
    expect((await again.exec('echo same')).stdout).toBe('same\n');

    await sandbox.delete();
    await sandbox.delete(); // already gone: done, not an error
    const gone = await Sandbox.connect(sandbox.id, client()).catch((err: unknown) => err);
    expect(gone).toBeInstanceOf(SessionNotFoundError);
    expect(gone).toMatchObject({ code: 'session_not_found', status: 404 });
    expect((gone as SessionNotFoundError).requestId).toEqual(expect.any(String));
  });

  it('forks a session into Sandbox objects with its files, and refuses a bad count', async () => {
    const sandbox = await Sandbox.create({ ...client(), metadata: { owner: 'sdk-fork' } });
    await sandbox.files.write('kept.txt', 'before the fork');
    const forks = await sandbox.fork({ count: 2 });
    expect(forks.processesKept).toBe(false);
    expect(forks.map((fork) => fork.id)).not.toContain(sandbox.id);
    expect(new Set(forks.map((fork) => fork.id)).size).toBe(2);
    for (const fork of forks) {
      expect(await fork.files.readText('kept.txt')).toBe('before the fork');
      expect(await fork.info()).toMatchObject({ metadata: { owner: 'sdk-fork' } });
      expect(fork.previewUrl()).toContain(fork.id.replace('_', '-'));
      await fork.delete();
    }
    await expect(sandbox.fork({ count: 11 })).rejects.toBeInstanceOf(InvalidRequestError);
    await sandbox.delete();
  });

  it('lists every session past one page, and deletes one by its id (issue 42)', async () => {
    const own = await createAccount(t.stack, 'paid');
    const mine = { ...client(), apiKey: own.key };
    const made = await Promise.all([1, 2, 3].map(() => Sandbox.create(mine)));
    const ids: string[] = [];
    for await (const session of Sandbox.list({ ...mine, limit: 1 })) ids.push(session.sessionId);
    expect(ids.sort()).toEqual(made.map((s) => s.id).sort());
    const page = await Sandbox.listPage({ ...mine, limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.pagination).toMatchObject({ total: 3, hasMore: true });

    for (const sandbox of made) await Sandbox.delete(sandbox.id, mine);
    await Sandbox.delete(made[0]!.id, mine); // already gone: done, not an error
    expect(await Sandbox.list(mine).toArray()).toEqual([]);
    await expect(Sandbox.connect(made[1]!.id, mine)).rejects.toBeInstanceOf(SessionNotFoundError);
  });

  it("reads and replaces a session's egress policy", async () => {
    const sandbox = await Sandbox.create({ ...client(), egress: { default: 'deny' } });
    expect(await sandbox.egress()).toEqual({
      sessionId: sandbox.id,
      default: 'deny',
      allow: [],
      deny: [],
    });
    // Nothing gets through, not even Docker's DNS (asked for this container: nothing leaves).
    const dns = `getent hosts sbx-${sandbox.id} >/dev/null && echo dns || echo refused`;
    expect((await sandbox.exec(dns)).stdout).toBe('refused\n');
    const changed = await sandbox.setEgress({ allow: [], deny: ['198.51.100.0/24'] });
    expect(changed).toMatchObject({ default: 'allow', deny: ['198.51.100.0/24'] });
    expect((await sandbox.exec(dns)).stdout).toBe('dns\n');
    await expect(sandbox.setEgress({ allow: ['nope nope'] })).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await sandbox.delete();
  });

  it('maps refusals to error classes', async () => {
    const badKey = await Sandbox.list({ ...client(), apiKey: 'sk_live_nope' }).catch(
      (e: unknown) => e,
    );
    expect(badKey).toBeInstanceOf(UnauthorizedError);
    const free = await createAccount(t.stack, 'free');
    const forbidden = await Sandbox.create({
      ...client(),
      apiKey: free.key,
      resourceLimits: { memory: 512 },
    }).catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(ForbiddenError);
    expect((forbidden as ForbiddenError).details).toMatchObject({ field: 'resourceLimits' });
  });
});

/** One sandbox for the tests of a `describe`, deleted after them. */
function useSandbox(): { readonly sandbox: Sandbox } {
  let sandbox: Sandbox | undefined;
  beforeAll(async () => {
    sandbox = await Sandbox.create(client());
  });
  afterAll(() => sandbox?.delete());
  return {
    get sandbox() {
      if (sandbox === undefined) throw new Error('the sandbox is made in beforeAll');
      return sandbox;
    },
  };
}

describe('runs', () => {
  const box = useSandbox();

  it('runs TypeScript and commands with env, files and a working directory', async () => {
    const code = await box.sandbox.run('const n: number = 6 * 7; console.log(n, process.env.WHO)', {
      env: { WHO: 'sdk' },
    });
    expect(code).toMatchObject({ stdout: '42 sdk\n', exitCode: 0, timedOut: false });
    const command = await box.sandbox.exec('pwd; cat in.txt; exit 3', {
      workingDir: 'sub',
      files: [{ path: 'sub/in.txt', content: 'given' }],
    });
    expect(command).toMatchObject({ stdout: '/workspace/sub\ngiven', exitCode: 3 });
  });

  it('streams events in order, and feeds callbacks', async () => {
    const events: ExecutionEvent[] = [];
    for await (const event of box.sandbox.stream({ command: 'echo out; echo err >&2; exit 2' })) {
      events.push(event);
    }
    // `started` first for every run (not only one with stdin), naming its pid and process id.
    expect(events[0]).toEqual({
      type: 'started',
      pid: expect.any(Number),
      processId: expect.stringMatching(/^proc_[a-f0-9]{16}$/),
    });
    expect(events.map((e) => e.type).sort()).toEqual([
      'exit',
      'result',
      'started',
      'stderr',
      'stdout',
    ]);
    expect(events.slice(-2)).toEqual([
      { type: 'exit', code: 2 },
      { type: 'result', result: expect.objectContaining({ exitCode: 2, stdout: 'out\n' }) },
    ]);
    const seen: string[] = [];
    const result = await box.sandbox.run('console.log("a"); console.error("b")', {
      onStdout: (data) => seen.push(`out:${data}`),
      onStderr: (data) => seen.push(`err:${data}`),
    });
    expect(seen.sort()).toEqual(['err:b\n', 'out:a\n']);
    expect(result.stdout).toBe('a\n');
  });

  it('leaves the run going when the loop leaves early, and kills it when the signal aborts', async () => {
    for await (const event of box.sandbox.stream({ command: 'echo go; sleep 2; touch left.txt' })) {
      if (event.type === 'stdout') break;
    }
    const controller = new AbortController();
    const cancelled = box.sandbox.exec('sleep 2; touch aborted.txt', { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(cancelled).rejects.toBeInstanceOf(AbortedError);
    await sleep(3000);
    // Leaving the loop only closed the connection: the run outlived it (issue 42).
    expect(await exists(box.sandbox, 'left.txt')).toBe(true);
    expect(await exists(box.sandbox, 'aborted.txt')).toBe(false);
  });

  it('throws ExecutionTimeoutError with the partial output, streamed or not', async () => {
    const plain = await box.sandbox
      .exec('echo started; sleep 5', { timeout: 1 })
      .catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(ExecutionTimeoutError);
    expect(plain).toMatchObject({ status: 408, stdout: 'started\n' });
    const streamed = await box.sandbox
      .exec('echo started; sleep 5', { timeout: 1, onStdout: () => undefined })
      .catch((e: unknown) => e);
    expect(streamed).toBeInstanceOf(ExecutionTimeoutError);
    expect(streamed).toMatchObject({ stdout: 'started\n' });
  });

  it('kills every process only when asked to by killAll, and names an unknown pid', async () => {
    await box.sandbox.exec('nohup sleep 100 >/dev/null 2>&1 &');
    // A missing pid no longer means "everything" (issue 42).
    const kill = box.sandbox.processes.kill.bind(box.sandbox.processes) as (
      pid?: number,
    ) => unknown;
    await expect(kill(undefined)).rejects.toBeInstanceOf(InvalidRequestError);
    expect((await box.sandbox.exec("pgrep -f 'sleep 100' >/dev/null && echo alive")).stdout).toBe(
      'alive\n',
    );
    const killed = await box.sandbox.processes.killAll();
    expect(killed.killed).toBeGreaterThanOrEqual(1);
    await expect(box.sandbox.processes.kill(999_999)).rejects.toBeInstanceOf(ProcessNotFoundError);
  });
});

describe('runs in the background (issue 42)', () => {
  const box = useSandbox();

  it('gives a handle at once, and its result when it ends', async () => {
    const handle = await box.sandbox.exec('echo one; sleep 1; echo two >&2; exit 3', {
      background: true,
    });
    expect(handle.pid).toEqual(expect.any(Number));
    expect(handle.id).toMatch(/^proc_[a-f0-9]{16}$/);
    expect(await handle.info()).toMatchObject({ id: handle.id, pid: handle.pid, state: 'running' });
    const result = await handle.wait();
    expect(result).toMatchObject({ stdout: 'one\n', stderr: 'two\n', exitCode: 3 });
    expect(await handle.wait()).toMatchObject({ exitCode: 3 }); // again, once it has ended
    // A run that says nothing and ends at once has a handle too (its started event).
    const silent = await box.sandbox.exec('true', { background: true });
    expect((await silent.wait()).exitCode).toBe(0);
  });

  it('keeps running without its client, and its output can be followed and read', async () => {
    const handle = await box.sandbox.exec(
      'for i in 1 2 3; do echo $i; sleep 0.5; done; touch background-done.txt',
      { background: true },
    );
    // Leaving a follow loop ends the read only.
    for await (const event of handle.follow()) {
      if (event.type === 'stdout') break;
    }
    const followed: string[] = [];
    for await (const event of handle.follow()) {
      if (event.type === 'stdout') followed.push(event.data);
      if (event.type === 'end') followed.push(`end:${String(event.process.exitCode)}`);
    }
    expect(followed.join('')).toBe('1\n2\n3\nend:0');
    expect(await exists(box.sandbox, 'background-done.txt')).toBe(true);
    expect((await handle.output()).stdout).toBe('1\n2\n3\n');
  });

  it('feeds output callbacks, writes stdin, and connects by pid', async () => {
    const seen: string[] = [];
    const handle = await box.sandbox.run(
      'process.stdin.on("data", (d) => console.log("got " + String(d).trim()));',
      { background: true, stdin: true, onStdout: (data) => seen.push(data) },
    );
    await handle.writeStdin('a\n');
    const again = await box.sandbox.processes.connect(handle.pid);
    expect(again.id).toBe(handle.id);
    await again.closeStdin();
    expect((await handle.wait()).stdout).toBe('got a\n');
    expect(seen.join('')).toBe('got a\n');
  });

  it("kills its run by the handle or by the run's proc_ id, and killAll kills them all", async () => {
    const one = await box.sandbox.exec('sleep 30', { background: true });
    expect((await one.kill()).killed).toBeGreaterThanOrEqual(1);
    expect((await one.wait()).exitCode).not.toBe(0);
    expect(await one.kill()).toEqual({ killed: 0, pids: [] }); // ended: nothing killed
    const two = await box.sandbox.exec('sleep 30', { background: true });
    expect((await box.sandbox.processes.kill(two.id)).pids).toContain(two.pid);
    expect((await two.wait()).exitCode).not.toBe(0);
    const many = await Promise.all(
      [1, 2].map(() => box.sandbox.exec('sleep 30', { background: true })),
    );
    expect((await box.sandbox.processes.killAll()).killed).toBeGreaterThanOrEqual(2);
    for (const handle of many) expect((await handle.wait()).exitCode).not.toBe(0);
  });
});

describe('files', () => {
  const box = useSandbox();

  it('writes and reads text and bytes, lists, and refuses bad paths', async () => {
    await box.sandbox.files.write('notes/a.txt', 'héllo');
    const bytes = Uint8Array.from([0, 255, 1, 254]);
    expect(await box.sandbox.files.write('bin/b.dat', bytes)).toEqual({
      path: 'bin/b.dat',
      size: 4,
    });
    expect(await box.sandbox.files.readText('notes/a.txt')).toBe('héllo');
    expect(Array.from(await box.sandbox.files.read('bin/b.dat'))).toEqual([0, 255, 1, 254]);
    const listed = await box.sandbox.files.list();
    expect(listed.files.map((f) => f.path).sort()).toEqual(['bin/b.dat', 'notes/a.txt']);
    await expect(box.sandbox.files.read('nope.txt')).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(box.sandbox.files.write('../escape', 'x')).rejects.toBeInstanceOf(
      InvalidPathError,
    );
  });

  it('round-trips a 20 MB file as streams, by hash, with progress', async () => {
    const chunks = Array.from({ length: 20 }, () => randomBytes(1_000_000));
    const hash = createHash('sha256');
    for (const chunk of chunks) hash.update(chunk);
    let i = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks[i++];
        if (next === undefined) controller.close();
        else controller.enqueue(next);
      },
    });
    const progress: number[] = [];
    const written = await box.sandbox.files.write('big.bin', source, {
      onProgress: (sent) => progress.push(sent),
    });
    expect(written.size).toBe(20_000_000);
    expect(progress.at(-1)).toBe(20_000_000);
    expect(progress.length).toBeGreaterThan(1);

    const back = createHash('sha256');
    let size = 0;
    const reader = (await box.sandbox.files.readStream('big.bin')).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      back.update(value);
    }
    expect(size).toBe(20_000_000);
    expect(back.digest('hex')).toBe(hash.digest('hex'));
  });
});

describe('terminals', () => {
  it('makes a terminal whose URL opens a shell once', async () => {
    const sandbox = await Sandbox.create(client());
    try {
      const terminal = await sandbox.terminals.create({ cols: 90, rows: 25 });
      expect(terminal.url).toMatch(
        /^ws:\/\/127\.0\.0\.1:\d+\/v1\/sessions\/ses_\w+\/terminals\/term_\w+\/connect\?token=tty_/,
      );
      const opened = await SocketTerminal.open(terminal.url);
      if (refused(opened)) throw new Error(`refused: ${opened.status}`);
      opened.type('stty size\r');
      await opened.until(/25 90\r\n/);
      opened.ws.close();
      expect(refused(await SocketTerminal.open(terminal.url))).toBe(true);
    } finally {
      await sandbox.delete();
    }
  });
});

describe('previews', () => {
  it('gives the preview URL of a port and the private preview header', async () => {
    const sandbox = await Sandbox.create({ ...client(), preview: { private: true } });
    try {
      expect(sandbox.previewToken).toEqual(expect.any(String));
      const host = sandbox.id.replace('_', '-');
      expect(new URL(sandbox.previewUrl()).hostname).toBe(`${host}.preview.test`);
      expect(new URL(sandbox.previewUrl(8080)).hostname).toBe(`8080-${host}.preview.test`);
      await startPreviewApp(t.stack.url, paid.key, sandbox.id, [3000]);
      const edge = t.stack.edge?.url ?? '';
      const hostOf = (url: string) => new URL(url).host;
      expect((await previewRequest(edge, hostOf(sandbox.previewUrl()))).status).toBe(403);
      const open = await previewRequest(
        edge,
        hostOf(sandbox.previewUrl()),
        '/',
        sandbox.previewHeaders(),
      );
      expect(open.status).toBe(200);
    } finally {
      await sandbox.delete();
    }
  });
});

describe('runs that outlive their connection', () => {
  it('resumes a stream cut mid-run: every byte once, and the result', async () => {
    const sandbox = await Sandbox.create(client());
    const command = 'for i in $(seq 1 30); do echo "line $i"; sleep 0.03; done; exit 4';
    const whole = await sandbox.exec(command);
    const proxy = await cuttingProxy(t.stack.url, 600);
    try {
      const remote = await Sandbox.connect(sandbox.id, { ...client(), apiUrl: proxy.url });
      let stdout = '';
      let result: unknown;
      for await (const event of remote.stream({ command })) {
        if (event.type === 'stdout') stdout += event.data;
        if (event.type === 'result') result = event.result;
      }
      expect(stdout).toBe(whole.stdout);
      expect(result).toMatchObject({ stdout: whole.stdout, exitCode: 4 });
      expect(proxy.seen.filter((r) => r.includes('/execute') && /proc_/.test(r))).toHaveLength(1);
    } finally {
      await proxy.close();
      await sandbox.delete();
    }
  });

  it('gives up a stalled request after requestTimeoutMs, and resumes a stalled stream', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const stalled = await Sandbox.connect('ses_whatever', {
        ...client(),
        apiUrl: silent.url,
        requestTimeoutMs: 500,
        maxRetries: 0,
      }).catch((e: unknown) => e);
      expect(stalled).toBeInstanceOf(ClientTimeoutError);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await silent.close();
    }
    const sandbox = await Sandbox.create(client());
    const command = 'for i in $(seq 1 20); do echo "line $i"; sleep 0.1; done';
    const proxy = await cuttingProxy(t.stack.url, 400, 'stall');
    try {
      const remote = await Sandbox.connect(sandbox.id, {
        ...client(),
        apiUrl: proxy.url,
        requestTimeoutMs: 1000,
      });
      let stdout = '';
      for await (const event of remote.stream({ command })) {
        if (event.type === 'stdout') stdout += event.data;
      }
      expect(stdout).toBe(Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join(''));
      expect(proxy.seen.filter((r) => r.includes('/execute') && /proc_/.test(r))).toHaveLength(1);
    } finally {
      await proxy.close();
      await sandbox.delete();
    }
  });

  it('writes stdin, lists runs, reads and follows their output', async () => {
    const sandbox = await Sandbox.create(client());
    const seen: string[] = [];
    let pid = 0;
    for await (const event of sandbox.stream(
      { command: 'read a; echo "hi $a"; cat' },
      { stdin: true },
    )) {
      if (event.type === 'started') {
        pid = event.pid;
        await sandbox.processes.writeStdin(pid, 'sdk\n');
        await sandbox.processes.writeStdin(pid, new TextEncoder().encode('bytes'), { close: true });
      }
      if (event.type === 'stdout') seen.push(event.data);
    }
    expect(seen.join('')).toBe('hi sdk\nbytes');
    const [listed] = await sandbox.processes.list();
    expect(listed).toMatchObject({ pid, state: 'exited', exitCode: 0, stdinBytes: 9 });
    expect((await sandbox.processes.output(pid)).stdout).toBe('hi sdk\nbytes');
    const followed: string[] = [];
    for await (const event of sandbox.processes.follow(listed?.id ?? '')) {
      followed.push(event.type === 'end' ? `end:${event.process.exitCode}` : event.type);
    }
    expect(followed.at(-1)).toBe('end:0');
    await sandbox.delete();
  });
});

describe('retries', () => {
  it('retries 503 and 429 as asked, and a create whose answer was lost makes one session', async () => {
    const proxy = await scriptedProxy(t.stack.url, [
      { path: '/sessions/create', answer: 'lose' },
      { path: '/sessions/create', answer: 503, retryAfter: '0' },
      { path: '/sessions?', answer: 429, retryAfter: '1' },
    ]);
    try {
      const before = (await Sandbox.list({ ...client(), limit: 100 })).pagination.total;
      const sandbox = await Sandbox.create({ ...client(), apiUrl: proxy.url });
      // Forwarded twice (the lost answer, then the retry), one session: the Idempotency-Key.
      expect(proxy.forwarded.filter((r) => r.includes('/sessions/create'))).toHaveLength(2);
      expect((await Sandbox.list({ ...client(), limit: 100 })).pagination.total).toBe(before + 1);

      const started = Date.now();
      const page = await Sandbox.list({ ...client(), apiUrl: proxy.url, limit: 100 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // Retry-After: 1 honoured
      expect(page.data.map((s) => s.sessionId)).toContain(sandbox.id);
      await sandbox.delete();
    } finally {
      await proxy.close();
    }
  });

  it('never runs code twice: a run answered 503 is not sent again; gives up on 429 when told', async () => {
    const proxy = await scriptedProxy(t.stack.url, [
      { path: '/execute', answer: 503, retryAfter: '0' },
    ]);
    const sandbox = await Sandbox.create(client());
    try {
      const remote = await Sandbox.connect(sandbox.id, { ...client(), apiUrl: proxy.url });
      await expect(remote.exec('echo once >> runs.txt')).rejects.toBeInstanceOf(
        ServiceUnavailableError,
      );
      expect(proxy.forwarded.filter((r) => r.includes('/execute'))).toHaveLength(0);
      const limited = await scriptedProxy(t.stack.url, [
        { path: '/sessions?', answer: 429, retryAfter: '120' },
      ]);
      try {
        const refused = await Sandbox.list({
          ...client(),
          apiUrl: limited.url,
          limit: 10,
          maxRetryDelayMs: 5000,
        }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(RateLimitedError);
        expect(refused).toMatchObject({ retryAfter: 120 });
      } finally {
        await limited.close();
      }
    } finally {
      await sandbox.delete();
      await proxy.close();
    }
  });
});

describe('builds and runtimes', () => {
  /** Creates a session, runs a command plainly and streamed, deletes it; prints two lines. */
  const body =
    "const s = await Sandbox.create(); const r = await s.exec('echo built'); " +
    "let streamed = ''; for await (const e of s.stream({ command: 'echo streamed' })) " +
    "if (e.type === 'stdout') streamed += e.data; await s.delete(); console.log(r.stdout + streamed.trim());";
  const scratch = useScratch('sdk-runtimes-', {
    'esm.mjs': `import { Sandbox } from ${JSON.stringify(join(SDK_DIST, 'esm/index.js'))};\n${body}\n`,
  });
  const cjs = `const { Sandbox } = require(${JSON.stringify(join(SDK_DIST, 'cjs/index.js'))}); (async () => { ${body} })().catch((e) => { console.error(e); process.exit(1); })`;

  const runtimes: Array<[string, [string, string[]]]> = [
    ['Node, CommonJS build', [process.execPath, ['-e', cjs]]],
    ['Node, ESM build', [process.execPath, ['esm.mjs']]],
    ['Bun, ESM build', [BUN, ['esm.mjs']]],
    ['Deno, ESM build', [DENO, denoRun('esm.mjs')]],
  ];

  it.each(runtimes)('works on %s', async (_name, command) => {
    const sdk = { key: paid.key, url: `${t.stack.url}/v1` };
    expect(await runWithSdk(command, scratch.dir, sdk)).toBe('built\nstreamed\n');
  });
});
