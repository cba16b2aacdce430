import { call, createAccount } from '../api';
import { openApiHelpers, type OpenApiContext } from './context';

function writeReadList(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  it('writeFile, readFile and listFiles', async () => {
    const { stack, account, sessionId } = t;
    const other = `ses_${'5'.repeat(24)}`;
    const processesOnly = await createAccount(stack, 'free', { scopes: ['processes'] });
    const w = (key: string | undefined, body: Record<string, unknown>) =>
      post('/files/write', key, body);
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId, path: 'a.txt', content: 'x' }),
    );
    expectDocumented('post', '/files/write', await w(account.key, { sessionId, path: 'a.txt' }));
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId, path: '../a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId: other, path: 'a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(undefined, { sessionId, path: 'a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(processesOnly.key, { sessionId, path: 'a', content: 'x' }),
    );
    expectDocumented(
      'post',
      '/files/write',
      await w(account.key, { sessionId, path: 'big', content: 'x'.repeat(1_100_000) }),
    );

    const get = (path: string, query: string, key: string | null = account.key) =>
      call(`${stack.url}/v1${path}?${query}`, key === null ? {} : { key });
    for (const path of ['/files/read', '/files/list']) {
      const file = path === '/files/read' ? '&path=a.txt' : '';
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}${file}`));
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}&path=..%2Fx`));
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}&path=missing`));
      expectDocumented('get', path, await get(path, `sessionId=${other}&path=a.txt`));
      expectDocumented('get', path, await get(path, `path=a.txt`));
      expectDocumented('get', path, await get(path, `sessionId=${sessionId}`, null));
      expectDocumented(
        'get',
        path,
        await get(path, `sessionId=${sessionId}&path=a.txt`, processesOnly.key),
      );
    }
    // Past what the read endpoint returns (256 MB).
    await post('/execute', account.key, { sessionId, command: 'fallocate -l 257M huge.bin' });
    const huge = await get('/files/read', `sessionId=${sessionId}&path=huge.bin`);
    expect(huge.body).toMatchObject({
      error: { code: 'file_too_large', details: { path: 'huge.bin' } },
    });
    expectDocumented('get', '/files/read', huge);
    await post('/execute', account.key, { sessionId, command: 'rm huge.bin' });
  });
}

function fileOperations(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  it('statFile, removeFile, renameFile and makeDirectory', async () => {
    const { stack } = t;
    const other = `ses_${'5'.repeat(24)}`;
    const processesOnly = await createAccount(stack, 'free', { scopes: ['processes'] });
    // An account of its own: the main one's budget of requests per minute is spent elsewhere.
    const owner = await createAccount(stack, 'free');
    const made = await post('/sessions/create', owner.key, {});
    const sessionId = (made.body as { sessionId: string }).sessionId;
    await post('/execute', owner.key, {
      sessionId,
      command: 'mkdir -p ops/full && printf x > ops/full/x && printf y > ops/y && printf z > ops/z',
    });
    const stat = (query: string, key: string | null = owner.key) =>
      call(`${stack.url}/v1/files/stat?${query}`, key === null ? {} : { key });
    for (const query of [
      `sessionId=${sessionId}&path=ops/y`,
      `sessionId=${sessionId}&path=..%2Fx`,
      `sessionId=${sessionId}&path=missing`,
      `sessionId=${other}&path=ops/y`,
      'path=ops/y',
    ]) {
      expectDocumented('get', '/files/stat', await stat(query));
    }
    expectDocumented('get', '/files/stat', await stat(`sessionId=${sessionId}&path=x`, null));
    expectDocumented(
      'get',
      '/files/stat',
      await stat(`sessionId=${sessionId}&path=x`, processesOnly.key),
    );

    const cases: [string, Record<string, unknown>[]][] = [
      [
        '/files/mkdir',
        [
          { path: 'ops/new/dir' },
          { path: '../x' },
          { path: 'ops/y/sub' },
          { sessionId: other, path: 'x' },
        ],
      ],
      [
        '/files/rename',
        [
          { from: 'ops/z', to: 'ops/new/z' },
          { from: 'ops/y', to: 'ops/new/z' },
          { from: 'missing', to: 'ops/q' },
          { from: '.', to: 'ops/q' },
          { sessionId: other, from: 'ops/y', to: 'ops/q' },
        ],
      ],
      [
        '/files/remove',
        [
          { path: 'ops/new/z' },
          { path: 'ops/full' },
          { path: 'missing' },
          { path: '.' },
          { path: 'ops', recursive: 'yes' },
          { sessionId: other, path: 'ops/y' },
        ],
      ],
    ];
    for (const [path, bodies] of cases) {
      for (const body of bodies) {
        expectDocumented('post', path, await post(path, owner.key, { sessionId, ...body }));
      }
      const valid = { sessionId, path: 'x', from: 'x', to: 'y' };
      expectDocumented('post', path, await post(path, undefined, valid));
      expectDocumented('post', path, await post(path, processesOnly.key, valid));
    }
  });
}

/** A watch's answer as `call` gives one, its stream left after the headers (it never ends). */
async function watchAnswer(url: string, key?: string) {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
    signal: abort.signal,
  });
  if (response.status === 200) {
    abort.abort();
    return { status: 200, headers: response.headers, body: undefined, text: '' };
  }
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
}

function fileWatch(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  it('watchFiles (ADR 60): the stream, and each refusal before it', async () => {
    const { stack } = t;
    const processesOnly = await createAccount(stack, 'free', { scopes: ['processes'] });
    const owner = await createAccount(stack, 'free');
    const made = await post('/sessions/create', owner.key, {});
    const sessionId = (made.body as { sessionId: string }).sessionId;
    await post('/execute', owner.key, { sessionId, command: 'mkdir -p w && touch w/f' });
    const watch = (query: string, key: string | null = owner.key) =>
      watchAnswer(`${stack.url}/v1/files/watch?sessionId=${sessionId}&${query}`, key ?? undefined);
    const answers = [
      await watch('path=w'),
      await watch('path=w/f'),
      await watch('path=w&recursive=1'),
      await watch('path=missing'),
      await watchAnswer(`${stack.url}/v1/files/watch?sessionId=ses_${'5'.repeat(24)}`, owner.key),
      await watch('path=w', null),
      await watch('path=w', processesOnly.key),
    ];
    // The bound of 4 a session, in another (the first watch above ends soon, not at once).
    const other = await post('/sessions/create', owner.key, {});
    const full = (other.body as { sessionId: string }).sessionId;
    const held = await Promise.all([1, 2, 3, 4].map(() => holdWatch(stack.url, full, owner.key)));
    answers.push(await watchAnswer(`${stack.url}/v1/files/watch?sessionId=${full}`, owner.key));
    for (const hold of held) hold.abort();
    expect(answers.map((answer) => answer.status)).toEqual([
      200, 400, 400, 404, 404, 401, 403, 429,
    ]);
    for (const answer of answers) expectDocumented('get', '/files/watch', answer);
  });
}

/** A watch kept open until its controller aborts. */
async function holdWatch(url: string, sessionId: string, key: string): Promise<AbortController> {
  const abort = new AbortController();
  const response = await fetch(`${url}/v1/files/watch?sessionId=${sessionId}`, {
    headers: { authorization: `Bearer ${key}` },
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  return abort;
}

function diskFull(t: OpenApiContext): void {
  const { expectDocumented, post } = openApiHelpers(t);
  it('disk_full on execute and writeFile', async () => {
    const { account, sessionId } = t;
    await post('/execute', account.key, {
      sessionId,
      command: 'fallocate -l $(( $(df -B1 --output=avail . | tail -1) - 4096 )) fill',
    });
    const file = { path: 'f.txt', content: 'x'.repeat(100_000) };
    expectDocumented(
      'post',
      '/files/write',
      await post('/files/write', account.key, { sessionId, ...file }),
    );
    expectDocumented(
      'post',
      '/execute',
      await post('/execute', account.key, { sessionId, command: 'true', files: [file] }),
    );
    // The last blocks too: a directory then has none to take.
    await post('/execute', account.key, {
      sessionId,
      command: 'dd if=/dev/zero of=fill2 bs=1024 2>/dev/null',
    });
    for (const [path, body] of [
      ['/files/mkdir', { path: 'full/a/b' }],
      ['/files/rename', { from: 'a.txt', to: 'full/a/b/a.txt' }],
    ] as const) {
      const full = await post(path, account.key, { sessionId, ...body });
      expect([path, full.body]).toEqual([
        path,
        expect.objectContaining({ error: expect.objectContaining({ code: 'disk_full' }) }),
      ]);
      expectDocumented('post', path, full);
    }
    await post('/execute', account.key, { sessionId, command: 'rm fill fill2' });
  });
}

/** The files endpoints, and disk_full on the shared session. */
export const fileCases: ((t: OpenApiContext) => void)[] = [
  writeReadList,
  fileOperations,
  fileWatch,
  diskFull,
];
