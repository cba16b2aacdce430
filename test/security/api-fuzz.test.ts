import fc from 'fast-check';
import { call, createAccount, createSession, type TestAccount } from '../support/api';
import { onGvisor, startStack, type TestStack } from '../support/stack';

/**
 * Property: whatever JSON a client sends to any endpoint, the answer is a success or a 4xx in
 * the spec's error shape, within seconds: never a 500, never a hang.
 */

// A fuzzed create that is valid makes a sandbox: on gVisor each takes seconds (a cold start,
// past the test pool's one member), and the 40 of a property outlasted a minute.
if (onGvisor) jest.setTimeout(240_000);

let stack: TestStack;
let account: TestAccount;
let sessionId: string;

beforeAll(async () => {
  stack = await startStack();
  account = await createAccount(stack, 'enterprise', {
    limits: { requestsPerMinute: 100_000, maxConcurrentSessions: 1000 },
  });
  sessionId = await createSession(stack.url, account.key);
});

afterAll(async () => {
  await stack?.stop();
});

function expectWellFormed(status: number, body: unknown, text: string): void {
  if (status >= 500) throw new Error(`server error ${status}: ${text}`);
  if (status >= 400) {
    const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    if (typeof error?.code !== 'string' || typeof error.message !== 'string') {
      throw new Error(`${status} without the error shape: ${text}`);
    }
  }
}

async function post(path: string, body: unknown): Promise<void> {
  const started = Date.now();
  const response = await call(`${stack.url}/v1${path}`, { method: 'POST', key: account.key, body });
  if (Date.now() - started > 15_000) throw new Error(`${path} took ${Date.now() - started} ms`);
  expectWellFormed(response.status, response.body, response.text);
  // A session a fuzzed create made goes at once: dozens left idle (on gVisor, 8 % of a core
  // each) slowed the node until the property outlasted its minute.
  const made = (response.body as { sessionId?: unknown } | undefined)?.sessionId;
  if (path === '/sessions/create' && response.status === 200 && typeof made === 'string') {
    await call(`${stack.url}/v1/sessions/${made}`, { method: 'DELETE', key: account.key });
  }
}

/** A valid body with one field replaced by anything. */
function mutated(valid: Record<string, unknown>) {
  return fc
    .tuple(fc.constantFrom(...Object.keys(valid), 'extra'), fc.jsonValue())
    .map(([field, value]) => ({ ...valid, [field]: value }));
}

const RUNS = 40;

describe('fuzzed request bodies', () => {
  it('POST /sessions/create', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue(),
          mutated({ ttl: 60, metadata: { a: 1 }, resourceLimits: { memory: 512 } }),
        ),
        async (body) => {
          await post('/sessions/create', body);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('POST /execute', async () => {
    const valid = {
      sessionId,
      command: 'true',
      timeout: 5,
      env: { A: 'b' },
      workingDir: 'w',
      files: [],
    };
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.jsonValue(), mutated(valid)), async (body) => {
        await post('/execute', body);
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /files/write and /execution/kill', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.jsonValue(), mutated({ sessionId, path: 'fz.txt', content: 'x' })),
        fc.oneof(fc.jsonValue(), mutated({ sessionId, pid: 99_999 })),
        async (write, kill) => {
          await post('/files/write', write);
          await post('/execution/kill', kill);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe('fuzzed file requests and queries', () => {
  it('POST /files/remove, /files/rename and /files/mkdir', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.jsonValue(), mutated({ sessionId, path: 'fz', recursive: true })),
        fc.oneof(fc.jsonValue(), mutated({ sessionId, from: 'fz', to: 'fz2', overwrite: true })),
        fc.oneof(fc.jsonValue(), mutated({ sessionId, path: 'fz' })),
        async (remove, rename, mkdir) => {
          await post('/files/mkdir', mkdir);
          await post('/files/rename', rename);
          await post('/files/remove', remove);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('GET endpoints with fuzzed query strings and ids', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), async (a, b) => {
        const q = (value: string) => encodeURIComponent(value);
        for (const url of [
          `/sessions?limit=${q(a)}&offset=${q(b)}`,
          `/sessions/${q(a)}`,
          `/files/read?sessionId=${q(sessionId)}&path=${q(a)}`,
          `/files/list?sessionId=${q(b)}&path=${q(a)}`,
          `/files/stat?sessionId=${q(sessionId)}&path=${q(a)}`,
        ]) {
          const response = await call(`${stack.url}/v1${url}`, { key: account.key });
          expectWellFormed(response.status, response.body, response.text);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
