import { join } from 'node:path';
import { BUN, DENO, denoRun, runWithSdk, SDK_DIST, useScratch } from '../support/sdk-runtimes';
import { connectionCases } from '../support/sdk-cases/connection';
import { sdkContext } from '../support/sdk-cases/context';
import { runCases } from '../support/sdk-cases/runs';
import { sessionCases } from '../support/sdk-cases/sessions';
import { useStack } from '../support/use-stack';

/**
 * The TypeScript SDK (packages/sdk) against the real stack: every method, streaming with an
 * early break, cancellation, retries through a proxy that answers 503 and 429, idempotent
 * creates, errors as classes, a large file by hash, and both of its builds. The cases, one
 * module per topic, are in test/support/sdk-cases/; they share this file's stack.
 */
const t = useStack({ edge: true });
const s = sdkContext(t);

for (const register of [...sessionCases, ...runCases, ...connectionCases]) register(s);

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
    const sdk = { key: s.client().apiKey, url: s.client().apiUrl };
    expect(await runWithSdk(command, scratch.dir, sdk)).toBe('built\nstreamed\n');
  });
});
