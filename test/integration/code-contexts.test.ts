import {
  ContextLimitExceededError,
  ContextNotFoundError,
  ContextRestartedError,
  Sandbox,
  type CellError,
  type CellResult,
} from '@sandbox/sdk';
import { createAccount } from '../support/api';
import { contextCalls, mainText, type Cell, type Context } from '../support/code-contexts';
import { parseEvents } from '../support/streamed-run';
import { useStackWithAccount } from '../support/use-stack';

/**
 * Code contexts (ADR 42): a long-lived process per context, whose variables stay from one
 * cell to the next, with the last expression's value as the cell's result.
 */

const t = useStackWithAccount('paid', { session: true });

const { contextsPath, newContext, cell, sharedContext } = contextCalls(t);

describe('code contexts', () => {
  let ctx: string;

  beforeAll(async () => {
    ctx = await sharedContext();
  });

  it('answers a create with the context', async () => {
    const created = await t.api.post<Context>(contextsPath(), { language: 'javascript' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      contextId: expect.stringMatching(/^ctx_[0-9a-f]{24}$/),
      language: 'javascript',
      cwd: '/workspace',
      createdAt: expect.any(String),
    });
    await t.api.delete(`${contextsPath()}/${created.body.contextId}`);
  });

  it('keeps variables, functions and classes, and returns the last expression', async () => {
    const first = await cell(
      ctx,
      'const x = 41;\nfunction inc(n) { return n + 1 }\nclass P { v = 2 }',
    );
    expect(first.status).toBe(200);
    expect(first.body.exitCode).toBe(0);
    const second = await cell(ctx, 'inc(x) + new P().v');
    expect(second.body.results).toEqual([
      { 'text/plain': '44', 'application/json': '44', isMain: true },
    ]);
  });

  it('gives objects as inspect text and JSON, and console output as stdout and stderr', async () => {
    const run = await cell(ctx, "console.log('out'); console.error('err'); ({ a: [1, 'b'] })");
    expect(run.body.stdout).toBe('out\n');
    expect(run.body.stderr).toBe('err\n');
    expect(run.body.results).toEqual([
      { 'text/plain': "{ a: [ 1, 'b' ] }", 'application/json': '{"a":[1,"b"]}', isMain: true },
    ]);
  });

  it('strips TypeScript, and reports a syntax error as the cell error', async () => {
    const typed = await cell(ctx, 'const typed: number = 3;\ninterface I { a: string }\ntyped * 2');
    expect(mainText(typed)).toBe('6');
    const broken = await cell(ctx, 'const = ;');
    expect(broken.status).toBe(200);
    expect(broken.body.exitCode).toBe(1);
    expect(broken.body.error?.name).toBe('SyntaxError');
  });

  it('runs top-level await, and keeps what an awaited cell declares', async () => {
    const run = await cell(
      ctx,
      'const later = await new Promise((r) => setTimeout(() => r(7), 20));\nlater + 1',
    );
    expect(mainText(run)).toBe('8');
    expect(mainText(await cell(ctx, 'later'))).toBe('7');
  });

  it('keeps imports for the next cell', async () => {
    await cell(ctx, "import { basename } from 'node:path';");
    expect(mainText(await cell(ctx, "basename('/a/b.txt')"))).toBe("'b.txt'");
  });

  it('lets a later cell declare a const, a let or a class again, as in a notebook', async () => {
    await cell(ctx, 'const again = 1;\nlet twice = 2;\nclass Again { v() { return 1 } }');
    const redeclared = await cell(
      ctx,
      'const again = 10;\nlet twice = 20;\nclass Again { v() { return 2 } }\nagain + twice + new Again().v()',
    );
    expect(redeclared.body.exitCode).toBe(0);
    expect(mainText(redeclared)).toBe('32');
  });
});

describe('code contexts: imports again, display, errors, timeouts', () => {
  let ctx: string;

  beforeAll(async () => {
    ctx = await sharedContext();
  });

  it('runs an import cell again, and imports workspace modules from the cwd', async () => {
    await cell(ctx, "require('node:fs').writeFileSync('helper.mjs', 'export const answer = 21;')");
    const source =
      "import { answer } from './helper.mjs';\nconst mod = await import('./helper.mjs');\nanswer + mod.answer";
    expect(mainText(await cell(ctx, source))).toBe('42');
    expect(mainText(await cell(ctx, source))).toBe('42');
  });

  it('adds what display() shows, MIME bundles as they are, before the main result', async () => {
    const run = await cell(
      ctx,
      "display({ 'text/html': '<b>hi</b>', 'image/png': new Uint8Array([1, 2, 3]) });\ndisplay([1]);\n'main'",
    );
    expect(run.body.results).toEqual([
      {
        'text/html': '<b>hi</b>',
        'image/png': 'AQID',
        'text/plain': '[text/html, image/png]',
        isMain: false,
      },
      { 'text/plain': '[ 1 ]', 'application/json': '[1]', isMain: false },
      { 'text/plain': "'main'", 'application/json': '"main"', isMain: true },
    ]);
  });

  it('gives a thrown error as name, message and stack, exit code 1', async () => {
    const run = await cell(ctx, "throw new TypeError('boom')");
    expect(run.status).toBe(200);
    expect(run.body.exitCode).toBe(1);
    expect(run.body.error).toEqual({
      name: 'TypeError',
      message: 'boom',
      stack: expect.stringContaining('TypeError: boom'),
    });
    expect(run.body.error?.stack).not.toContain('context-host');
    // Only the cell's frames: not the context's event loop under it.
    expect(run.body.error?.stack.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^ {4}at \/workspace\/<cell-\d+>:1:7$/),
    ]);
  });

  it("points a TypeScript cell's stack at the line it was written on", async () => {
    const run = await cell(
      ctx,
      'interface A { a: string }\ntype B = number;\nconst unused: number = 1;\n\nfunction thrower(): never {\n  throw new Error("here");\n}\nthrower();',
    );
    expect(run.body.error?.stack).toMatch(/at thrower \(\/workspace\/<cell-\d+>:6:9\)/);
  });

  it('stops an endless loop at the timeout and keeps the variables', async () => {
    await cell(ctx, 'let kept = 5;');
    const looped = await cell(ctx, 'while (true) {}', { timeout: 1 });
    expect(looped.status).toBe(408);
    expect(mainText(await cell(ctx, 'kept'))).toBe('5');
  });
});

describe('code contexts: restarts, one cell at a time, the spare', () => {
  let ctx: string;

  beforeAll(async () => {
    ctx = await sharedContext();
  });

  it('answers context_restarted when a cell kills its process, and runs the next cell fresh', async () => {
    const own = await newContext();
    await cell(own, 'const gone = 1;');
    const killed = await cell(own, 'process.kill(process.pid, "SIGKILL")');
    expect(killed.status).toBe(409);
    expect((killed.body as unknown as { error: { code: string } }).error.code).toBe(
      'context_restarted',
    );
    const next = await cell(own, 'typeof gone');
    expect(mainText(next)).toBe("'undefined'");
  });

  it('runs one cell at a time: a second while one runs is 409 conflict', async () => {
    const slow = cell(ctx, 'await new Promise((r) => setTimeout(r, 1500)); 1');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const second = await cell(ctx, '2');
    expect(second.status).toBe(409);
    expect((second.body as unknown as { error: { code: string } }).error.code).toBe('conflict');
    expect(mainText(await slow)).toBe('1');
  });

  it('starts a context in its cwd, with its env, from a process started ahead (the spare)', async () => {
    // The spare starts once the session has a context, out of the way of its cells.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const asked = Date.now();
    const created = await t.api.post<Context>(contextsPath(), {
      cwd: 'sub/dir',
      env: { GREETING: 'hello' },
    });
    expect(created.body.cwd).toBe('/workspace/sub/dir');
    await cell(
      created.body.contextId,
      "require('node:fs').writeFileSync('here.cjs', 'module.exports = 7')",
    );
    const run = await cell(
      created.body.contextId,
      "[process.cwd(), process.env.GREETING, require('./here.cjs'), process.uptime()]",
    );
    const [cwd, greeting, required, uptime] = JSON.parse(
      String(run.body.results?.[0]?.['application/json']),
    ) as [string, string, number, number];
    expect([cwd, greeting, required]).toEqual(['/workspace/sub/dir', 'hello', 7]);
    // Its process was there before the create was asked for.
    expect(uptime).toBeGreaterThan((Date.now() - asked) / 1000);
    await t.api.delete(`${contextsPath()}/${created.body.contextId}`);
  });
});

describe('code contexts: several, listed, capped', () => {
  it('keeps two contexts apart', async () => {
    const a = await newContext();
    const b = await newContext();
    await cell(a, "globalThis.secret = 'a'; const onlyA = 1;");
    const seen = await cell(b, 'typeof secret + typeof onlyA');
    expect(mainText(seen)).toBe("'undefinedundefined'");
    await t.api.delete(`${contextsPath()}/${a}`);
    await t.api.delete(`${contextsPath()}/${b}`);
  });

  it('lists, restarts and deletes', async () => {
    const own = await newContext();
    const listed = await t.api.get<{ contexts: Context[] }>(contextsPath());
    expect(listed.body.contexts.map((c) => c.contextId)).toContain(own);
    await cell(own, 'const before = 1;');
    const restarted = await t.api.post<Context>(`${contextsPath()}/${own}/restart`);
    expect(restarted.status).toBe(200);
    expect(restarted.body.contextId).toBe(own);
    expect(mainText(await cell(own, 'typeof before'))).toBe("'undefined'");
    expect((await t.api.delete(`${contextsPath()}/${own}`)).status).toBe(200);
    const after = await t.api.get<{ contexts: Context[] }>(contextsPath());
    expect(after.body.contexts.map((c) => c.contextId)).not.toContain(own);
    const gone = await cell(own, '1');
    expect(gone.status).toBe(404);
  });

  it('refuses a context past the cap with 429', async () => {
    const session = await t.api.createSession();
    const path = `/v1/sessions/${session}/contexts`;
    for (let i = 0; i < 8; i++) expect((await t.api.post(path, {})).status).toBe(201);
    const refused = await t.api.post<{ error: { code: string } }>(path, {});
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('context_limit_exceeded');
    await t.api.deleteSession(session);
  });
});

describe('code contexts: streamed cells', () => {
  let ctx: string;

  beforeAll(async () => {
    ctx = await sharedContext();
  });

  it('streams a cell: its output as it comes, its values and error as events, then its result', async () => {
    const response = await t.api.executeStream(t.sessionId, {
      contextId: ctx,
      code:
        "console.log('one'); await new Promise((r) => setTimeout(r, 300)); console.log('two');\n" +
        "display({ 'text/html': '<b>hi</b>' }); 40 + 2",
    });
    expect(response.status).toBe(200);
    const events = parseEvents(await response.text());
    const stdout = events.filter((e) => e.event === 'stdout').map((e) => e.data['data']);
    expect(stdout.join('')).toBe('one\ntwo\n');
    expect(stdout.length).toBeGreaterThanOrEqual(2);
    const shown = { 'text/html': '<b>hi</b>', 'text/plain': '[text/html]', isMain: false };
    const main = { 'text/plain': '42', 'application/json': '42', isMain: true };
    const tail = events.slice(events.findIndex((e) => e.event === 'cell_result'));
    expect(tail.map((e) => [e.event, e.data['result'] ?? e.data['type']])).toEqual([
      ['cell_result', shown],
      ['cell_result', main],
      ['exit', 'exit'],
      ['result', undefined],
    ]);
    expect((tail[3]?.data as unknown as Cell).results).toEqual([shown, main]);

    // A reader that dropped after the first value resumes with the rest, none twice.
    const resumed = await t.api.executeStream(t.sessionId, {}, undefined, {
      'last-event-id': tail[0]?.id ?? '',
    });
    const rest = parseEvents(await resumed.text());
    expect(rest.map((e) => e.event)).toEqual(['cell_result', 'exit', 'result']);
    expect(rest[0]?.data['result']).toEqual(main);
    expect(rest[0]?.id).toBe(tail[1]?.id);
  });

  it("streams a cell's error as a cell_error event before exit", async () => {
    const response = await t.api.executeStream(t.sessionId, {
      contextId: ctx,
      code: "display(1); throw new TypeError('streamed no')",
    });
    const events = parseEvents(await response.text()).filter((e) => e.event.startsWith('cell_'));
    expect(events.map((e) => e.event)).toEqual(['cell_result', 'cell_error']);
    expect(events[1]?.data['error']).toMatchObject({ name: 'TypeError', message: 'streamed no' });
    expect(events[1]?.id).toMatch(/:cell2$/);
  });

  it("streams a megabyte of a cell's output without loss, in order", async () => {
    const lines = 16_384; // 64 bytes each: 1 MiB
    const response = await t.api.executeStream(t.sessionId, {
      contextId: ctx,
      code: `for (let i = 0; i < ${lines}; i++) process.stdout.write(String(i).padStart(63, '0') + '\\n');`,
    });
    const events = parseEvents(await response.text());
    const stdout = events.filter((e) => e.event === 'stdout').map((e) => String(e.data['data']));
    const expected = Array.from({ length: lines }, (_, i) => `${String(i).padStart(63, '0')}\n`);
    const received = stdout.join('');
    expect(received.length).toBe(1024 * 1024);
    expect(received === expected.join('')).toBe(true);
    expect(events.at(-1)?.event).toBe('result');
  });
});

describe('code contexts: files, plain runs, other accounts', () => {
  let ctx: string;

  beforeAll(async () => {
    ctx = await sharedContext();
  });

  it('reports the files a cell wrote', async () => {
    const run = await cell(ctx, "require('node:fs').writeFileSync('cell-made.txt', 'x');");
    expect(run.body).toMatchObject({ exitCode: 0, filesWritten: ['cell-made.txt'] });
  });

  it('leaves plain runs stateless', async () => {
    await t.api.execute(t.sessionId, { code: 'globalThis.plain = 1' });
    const run = await t.api.execute<Cell>(t.sessionId, { code: 'console.log(typeof plain)' });
    expect(run.body.stdout).toBe('undefined\n');
    expect(run.body.results).toBeUndefined();
  });

  it('answers another account 404 for the session and its contexts', async () => {
    const stranger = t.as((await createAccount(t.stack, 'paid')).key);
    expect((await stranger.get(contextsPath())).status).toBe(404);
    expect((await stranger.post(contextsPath(), {})).status).toBe(404);
    const run = await stranger.execute(t.sessionId, { contextId: ctx, code: 'x' });
    expect(run.status).toBe(404);
  });
});

describe('code contexts through the SDK', () => {
  it('creates, lists, runs cells, restarts and deletes, with typed errors', async () => {
    const sandbox = await Sandbox.connect(t.sessionId, {
      apiKey: t.account.key,
      apiUrl: `${t.stack.url}/v1`,
    });
    const context = await sandbox.createContext({ language: 'typescript' });
    expect(context.contextId).toMatch(/^ctx_/);
    expect((await sandbox.contexts.list()).map((c) => c.contextId)).toContain(context.contextId);

    await sandbox.runCode('const n: number = 20;', { context });
    const seen: string[] = [];
    const values: CellResult[] = [];
    const result = await sandbox.runCode("console.log('streamed'); display('shown'); n * 2 + 2", {
      context,
      onStdout: (data) => seen.push(data),
      onResult: (value) => values.push(value),
    });
    expect(seen.join('')).toBe('streamed\n');
    expect(values.map((value) => value['text/plain'])).toEqual(["'shown'", '42']);
    expect(result.results).toEqual(values);
    const errors: CellError[] = [];
    const thrown = await sandbox.runCode("throw new RangeError('r')", {
      context: context.contextId,
      onError: (error) => errors.push(error),
    });
    expect(thrown.error).toMatchObject({ name: 'RangeError', message: 'r' });
    expect(errors).toEqual([thrown.error]);

    const killed = await sandbox
      .runCode('process.exit(3)', { context })
      .catch((err: unknown) => err);
    expect(killed).toBeInstanceOf(ContextRestartedError);

    await sandbox.runCode('const again = 1;', { context });
    await sandbox.contexts.restart(context.contextId);
    const fresh = await sandbox.runCode('typeof again', { context });
    expect(fresh.results?.[0]?.['text/plain']).toBe("'undefined'");

    await sandbox.contexts.delete(context.contextId);
    const gone = await sandbox.runCode('1', { context }).catch((err: unknown) => err);
    expect(gone).toBeInstanceOf(ContextNotFoundError);
  });

  it('throws ContextLimitExceededError past the cap', async () => {
    const sandbox = await Sandbox.create({ apiKey: t.account.key, apiUrl: `${t.stack.url}/v1` });
    await Promise.all(Array.from({ length: 8 }, () => sandbox.contexts.create()));
    await expect(sandbox.contexts.create()).rejects.toBeInstanceOf(ContextLimitExceededError);
    await sandbox.delete();
  });
});
