import { codeRunCases } from '../support/execution-cases/code-runs';
import { executeIn } from '../support/execution-cases/context';
import { fileAndMeasureCases } from '../support/execution-cases/files-and-measures';
import { processCases } from '../support/execution-cases/processes';
import { useStackWithAccount } from '../support/use-stack';

/**
 * POST /v1/execute: code and commands, files, measures, output, processes. One stack and one
 * session for the file; the cases other than output's, one module per topic, are in
 * test/support/execution-cases/.
 */

// Streams keep alive after 3 s of silence here, not 15: the keep-alive test waits for it.
const t = useStackWithAccount('paid', {
  session: true,
  stack: { gatewayEnv: { SSE_KEEP_ALIVE_S: '3' } },
});

const execute = executeIn(t);

for (const register of [...codeRunCases, ...fileAndMeasureCases]) register(t);

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

for (const register of processCases) register(t);
