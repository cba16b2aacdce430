import type { ExecDeps } from './runner-operations';
import { installMissing } from './runner-operations';
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
