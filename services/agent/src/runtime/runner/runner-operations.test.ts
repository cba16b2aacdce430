import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunnerEvent } from '@sandbox/runner';
import type { ExecDeps } from './runner-operations';
import { exec, installMissing } from './runner-operations';
import { logger, SESSION, tempDirPerTest } from '../processes/process-log-fixtures';
import { ProcessLogs } from '../processes/process-logs';
import type { ByteSink, RunSpec } from '../sandbox-runtime';

describe('installMissing', () => {
  const spec = (code: string) =>
    ({
      sessionId: 's',
      code,
      env: {},
      workingDir: '/workspace',
      timeoutMs: 5_000,
    }) as unknown as RunSpec & { code: string };
  const sink = { started: jest.fn(), write: jest.fn() } as unknown as ByteSink;
  const run = { started: Date.now(), written: [] };

  function depsAnswering(packages: unknown[]) {
    const request = jest.fn().mockResolvedValue({ packages });
    return { deps: { runner: { request } } as unknown as ExecDeps, request };
  }

  it('asks the runner nothing for code that names no package', async () => {
    const { deps, request } = depsAnswering([]);
    await expect(installMissing(deps, spec('x + 1'), sink, run)).resolves.toBeUndefined();
    await installMissing(deps, spec("import { join } from 'node:path'; require('fs')"), sink, run);
    expect(request).not.toHaveBeenCalled();
  });

  it("asks the runner which of the code's packages are missing", async () => {
    const { deps, request } = depsAnswering([]);
    await expect(
      installMissing(deps, spec("import _ from 'lodash'"), sink, run),
    ).resolves.toBeUndefined();
    expect(request).toHaveBeenCalledWith(
      { op: 'missingPackages', code: "import _ from 'lodash'", cwd: '/workspace' },
      'packages',
    );
  });
});

describe("exec: a run's log file (ADR 50)", () => {
  const root = tempDirPerTest('run-log-');
  const spec: RunSpec = {
    sessionId: SESSION,
    command: 'echo first; sleep 30',
    env: {},
    workingDir: '/workspace',
    timeoutMs: 5_000,
    files: [],
    stdin: false,
    logBytes: 1024,
  };
  const sink: ByteSink = { started: jest.fn(), write: jest.fn(() => true), onDrain: jest.fn() };
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const fileMade = () =>
    existsSync(join(root(), SESSION)) && readdirSync(join(root(), SESSION)).length > 0;

  /** A run whose runner hands its events over as `pieces`, each as one read would. */
  async function runInPieces(pieces: RunnerEvent[][], seen: boolean[]) {
    let onEvent: ((event: RunnerEvent, resume: () => void) => boolean | void) | undefined;
    let finish: () => void = () => undefined;
    const request = jest.fn(
      (_message: unknown, _expect: unknown, handlers: { onEvent: typeof onEvent }) => {
        onEvent = handlers.onEvent;
        return new Promise<void>((resolve) => (finish = resolve));
      },
    );
    const deps = {
      runner: { request, close: jest.fn() },
      logs: new ProcessLogs(root(), logger),
      logger,
    } as unknown as ExecDeps;
    const running = exec(deps, spec, sink);
    await turn();
    for (const piece of pieces) {
      for (const event of piece) onEvent?.(event, () => undefined);
      await Promise.resolve(); // the piece's microtasks, not the loop's next phase
      seen.push(fileMade());
    }
    finish();
    await running;
  }

  const started: RunnerEvent = { id: 1, ev: 'started', pid: 7 };
  const output: RunnerEvent = {
    id: 1,
    ev: 'stdout',
    data: Buffer.from('first\n').toString('base64'),
  };
  const result = {
    id: 1,
    ev: 'result',
    exitCode: 0,
    memoryUsedBytes: 0,
    cpuTimeMs: 0,
    timedOut: false,
    filesWritten: [],
  } as unknown as RunnerEvent;

  it('is made before the first part of a run still going leaves, so a crash then keeps it', async () => {
    const seen: boolean[] = [];
    await runInPieces([[started, output], [result]], seen);
    expect(seen).toEqual([true, true]);
  });

  it('waits for the answer when the run ended in the piece that said it started', async () => {
    const seen: boolean[] = [];
    await runInPieces([[started, output, result]], seen);
    expect(seen).toEqual([false]);
    await turn();
    await turn();
    expect(fileMade()).toBe(true);
  });
});
