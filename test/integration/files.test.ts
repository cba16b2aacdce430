import { useStackWithAccount } from '../support/use-stack';

const t = useStackWithAccount('free', { session: true });

const write = (path: string, content: string, extra: Record<string, unknown> = {}) =>
  t.api.writeFile(t.sessionId, path, content, extra);

async function read(path: string): Promise<{
  status: number;
  type: string | null;
  bytes: Buffer;
  length: string | null;
  text: string;
}> {
  const response = await t.api.readFile(t.sessionId, path);
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    length: response.headers.get('content-length'),
    bytes,
    text: bytes.toString('utf8'),
  };
}

const list = (query = '') =>
  t.api.get<{
    files: { path: string; size: number; modified: string; type: string }[];
    pagination?: unknown;
  }>(`/v1/files/list?sessionId=${t.sessionId}${query}`);

const execute = (command: string) => t.api.execute(t.sessionId, { command });

describe('write and read', () => {
  it('writes text, creating parent directories, and reads it back with its type', async () => {
    const written = await write('docs/readme.md', '# héllo\n');
    expect(written.status).toBe(200);
    expect(written.body).toEqual({ path: 'docs/readme.md', size: Buffer.byteLength('# héllo\n') });
    const back = await read('docs/readme.md');
    expect(back).toMatchObject({
      status: 200,
      text: '# héllo\n',
      type: 'text/markdown; charset=utf-8',
    });
    expect(back.length).toBe(String(Buffer.byteLength('# héllo\n')));
    expect((await execute('cat docs/readme.md')).body.stdout).toBe('# héllo\n');
    // The path written is reported as listings show it.
    const normalised = await write('./docs//x/../notes.txt', 'n');
    expect(normalised.body).toEqual({ path: 'docs/notes.txt', size: 1 });
  });

  it('round-trips binary content with base64 and serves raw bytes', async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await write('img/pixel.png', bytes.toString('base64'), { encoding: 'base64' });
    const back = await read('img/pixel.png');
    expect(back.type).toBe('image/png');
    expect(back.bytes.equals(bytes)).toBe(true);
    const unknown = await write('blob.xyz', 'x');
    expect(unknown.status).toBe(200);
    expect((await read('blob.xyz')).type).toBe('application/octet-stream');
  });

  it('replaces a file atomically', async () => {
    await write('config.json', '{"v":1}');
    await write('config.json', '{"v":2}');
    expect((await read('config.json')).text).toBe('{"v":2}');
    expect((await read('config.json')).type).toBe('application/json');
  });

  it('answers 404 file_not_found for a missing file and 400 for a directory', async () => {
    const missing = await t.api.get(`/v1/files/read?sessionId=${t.sessionId}&path=nope.txt`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'file_not_found' } });
    const dir = await t.api.get(`/v1/files/read?sessionId=${t.sessionId}&path=docs`);
    expect(dir.status).toBe(400);
    expect(dir.body).toMatchObject({ error: { code: 'invalid_path' } });
  });

  it('refuses files over the plan limit with 413 file_too_large', async () => {
    const big = await write('big.txt', 'a'.repeat(10 * 1024 * 1024 + 1));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({
      error: { code: 'file_too_large', details: { path: 'big.txt', size: 10 * 1024 * 1024 + 1 } },
    });
    const exact = await write('exact.txt', 'a'.repeat(10 * 1024 * 1024));
    expect(exact.status).toBe(200);
  });
});

describe('paths never leave /workspace', () => {
  it('refuses to write a file at a path that names a directory', async () => {
    const response = await write('newdir/', 'x');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: 'invalid_path' } });
    expect((await execute('test -e newdir && echo exists || echo absent')).body.stdout).toBe(
      'absent\n',
    );
  });

  it.each(['../etc/passwd', '/etc/passwd', 'a/../../x', 'nul\u0000byte', '..', '/workspace/x'])(
    'refuses %j everywhere',
    async (path) => {
      const w = await write(path, 'x');
      expect(w.status).toBe(400);
      expect(w.body).toMatchObject({ error: { code: 'invalid_path' } });
      const r = await read(path);
      expect(r.status).toBe(400);
      const l = await list(`&path=${encodeURIComponent(path)}`);
      expect(l.status).toBe(400);
    },
  );

  it('refuses symlinks that lead outside, for reading, writing and listing', async () => {
    await execute('ln -sfn /etc out; ln -sfn /etc/passwd passwd-link; ln -sfn /tmp tmp-link');
    expect((await read('passwd-link')).status).toBe(400);
    expect((await read('out/passwd')).status).toBe(400);
    const through = await write('tmp-link/evil.txt', 'x');
    expect(through.status).toBe(400);
    expect((await execute('ls /tmp/evil.txt 2>&1 || echo absent')).body.stdout).toContain('absent');
    const over = await write('passwd-link', 'x');
    expect(over.status).toBe(400);
    expect((await list('&path=out')).status).toBe(400);
  });

  it('follows symlinks that stay inside', async () => {
    await write('real/inner.txt', 'inside');
    await execute('ln -sfn real alias');
    expect((await read('alias/inner.txt')).text).toBe('inside');
  });
});

describe('odd paths and permissions', () => {
  it('answers a path in any script with its own error, and the service goes on', async () => {
    const missing = await read('é✓ÿ.txt');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text)).toMatchObject({
      error: { code: 'file_not_found', details: { path: 'é✓ÿ.txt' } },
    });
    expect((await write('é✓ÿ.txt', 'ü')).body).toEqual({ path: 'é✓ÿ.txt', size: 2 });
    expect((await read('é✓ÿ.txt')).text).toBe('ü');
  });

  it('answers file system refusals as 400 invalid_path with nothing of the system in them', async () => {
    await execute(
      'ln -sfn loop-b loop-a; ln -sfn loop-a loop-b; mkdir -p locked; chmod 555 locked; ' +
        'echo s > sealed.txt; chmod 000 sealed.txt',
    );
    const reads = [await read('loop-a'), await read('sealed.txt')];
    const writes = [await write('locked/x.txt', 'x'), await write(`${'n'.repeat(256)}.txt`, 'x')];
    const refusals = [
      ...reads.map((r) => ({ status: r.status, body: JSON.parse(r.text) as unknown })),
      ...writes.map((w) => ({ status: w.status, body: w.body })),
    ];
    for (const { status, body } of refusals) {
      expect([status, body]).toMatchObject([400, { error: { code: 'invalid_path' } }]);
      expect(JSON.stringify(body)).not.toMatch(/E[A-Z]{3,}|\/workspace/);
    }
    // A name of 250 bytes is legal, with room for nothing more.
    expect((await write(`${'n'.repeat(246)}.txt`, 'x')).status).toBe(200);
    await execute(
      'chmod 755 locked; chmod 644 sealed.txt; rm -rf loop-a loop-b locked sealed.txt n*',
    );
  });
});

describe('list', () => {
  it('lists files recursively, under a path, with pagination on request', async () => {
    await write('tree/a.txt', 'a');
    await write('tree/sub/b.txt', 'bb');
    await write('tree/sub/deeper/c.txt', 'ccc');
    const all = await list('&path=tree');
    expect(all.status).toBe(200);
    expect(all.body.files.map((f) => [f.path, f.size, f.type])).toEqual([
      ['tree/a.txt', 1, 'file'],
      ['tree/sub/b.txt', 2, 'file'],
      ['tree/sub/deeper/c.txt', 3, 'file'],
    ]);
    expect(Number.isNaN(Date.parse(all.body.files[0]!.modified))).toBe(false);
    expect(all.body.pagination).toBeUndefined();
    expect(all.body).not.toHaveProperty('truncated');
    const page = await list('&path=tree&limit=2&offset=1');
    expect(page.body.files.map((f) => f.path)).toEqual(['tree/sub/b.txt', 'tree/sub/deeper/c.txt']);
    expect(page.body.pagination).toEqual({ total: 3, limit: 2, offset: 1, hasMore: false });
    const root = await list();
    expect(root.body.files.map((f) => f.path)).toContain('tree/sub/deeper/c.txt');
    const missing = await list('&path=no-such-dir');
    expect(missing.status).toBe(404);
  });

  it('caps a whole listing at 10,000 files, and pages through them all', async () => {
    await execute('mkdir -p many && cd many && seq -w 1 10050 | xargs touch');
    const whole = await list('&path=many');
    expect(whole.body.files).toHaveLength(10_000);
    expect(whole.body).toMatchObject({ truncated: true });
    const last = await list('&path=many&limit=100&offset=10000');
    expect(last.body.files.map((f) => f.path)).toEqual(
      Array.from({ length: 50 }, (_, i) => `many/${String(10_001 + i).padStart(5, '0')}`),
    );
    expect(last.body.pagination).toEqual({
      total: 10_050,
      limit: 100,
      offset: 10_000,
      hasMore: false,
    });
    await execute('rm -rf many');
  });

  it('counts files in session info', async () => {
    const info = await t.api.session(t.sessionId);
    const listed = await list();
    expect(info.body.filesCount).toBe(listed.body.files.length);
  });
});

describe('the session disk', () => {
  it('answers 507 disk_full with used/limit when the disk is full, and stays usable', async () => {
    const fill = await execute(
      'fallocate -l 2000M fill 2>&1; df -B1 --output=size,used . | tail -1',
    );
    expect(fill.status).toBe(200);
    const [size] = (fill.body.stdout as string)
      .trim()
      .split('\n')
      .pop()!
      .trim()
      .split(/\s+/)
      .map(Number);
    // The disk is the session's own filesystem of its disk size (1024 MB), not the host's.
    expect(size).toBeGreaterThan(900 * 1024 * 1024);
    expect(size).toBeLessThanOrEqual(1024 * 1024 * 1024);
    await execute(
      'fallocate -l $(( $(df -B1 --output=avail . | tail -1) - 4096 )) fill2 2>/dev/null; true',
    );
    const full = await write('more.txt', 'x'.repeat(1024 * 1024));
    expect(full.status).toBe(507);
    expect(full.body).toMatchObject({
      error: {
        code: 'disk_full',
        details: { used: expect.any(Number), limit: expect.any(Number) },
      },
    });
    const details = (full.body as { error: { details: { used: number; limit: number } } }).error
      .details;
    expect(details.used).toBeLessThanOrEqual(details.limit);
    expect(details.limit).toBeLessThanOrEqual(1024 * 1024 * 1024);
    // A code run needs room for its source file: the same 507, not a server error.
    const code = await t.api.execute(t.sessionId, {
      code: `// ${'x'.repeat(200_000)}\nconsole.log(1)`,
    });
    expect(code.status).toBe(507);
    expect(code.body).toMatchObject({ error: { code: 'disk_full' } });
    const codeFiles = await execute('ls -a | grep -c "^\\.sandbox-code-" || true');
    expect(codeFiles.body.stdout).toBe('0\n');
    const leftovers = await execute('ls -a | grep -c "\\.tmp$" || true');
    expect(leftovers.body.stdout).toBe('0\n');

    await execute('rm -f fill fill2');
    expect((await write('more.txt', 'x'.repeat(1024 * 1024))).status).toBe(200);
  });
});
