import { readdirSync } from 'node:fs';
import { testWorkspaceDir } from '../support/stack';
import { useStackWithAccount } from '../support/use-stack';

const t = useStackWithAccount('paid');

const session = () => t.api.createSession();

const execute = (sessionId: string, body: Record<string, unknown>) =>
  t.api.execute(sessionId, { timeout: 120, ...body });

const bundles = () => readdirSync(`${testWorkspaceDir(t.stack.nodeId)}-packages/bundles`);

describe('packages imported by code', () => {
  it('are installed on first import, and a second session gets them from the node cache', async () => {
    const code = "import isNumber from 'is-number';\nconsole.log(isNumber(5), isNumber('x'));";
    const first = await session();
    const run = await execute(first, { code });
    expect(run.body).toMatchObject({ stdout: 'true false\n', exitCode: 0 });
    expect(run.body.filesWritten).toEqual([]);
    const listed = await execute(first, { command: 'ls node_modules/is-number/package.json' });
    expect(listed.body.stdout).toBe('node_modules/is-number/package.json\n');
    expect(bundles()).toHaveLength(1);

    const second = await session();
    const again = await execute(second, { code });
    expect(again.body).toMatchObject({ stdout: 'true false\n', exitCode: 0 });
    // Served from the same bundle: nothing new was installed for it.
    expect(bundles()).toHaveLength(1);
  });

  it('works with require, and follows the versions pinned in package.json', async () => {
    const id = await session();
    const run = await execute(id, {
      files: [{ path: 'package.json', content: '{"dependencies":{"is-number":"6.0.0"}}' }],
      code: "const pkg = require('is-number/package.json');\nconsole.log(pkg.version);",
    });
    expect(run.body).toMatchObject({ stdout: '6.0.0\n', exitCode: 0 });
  });

  it('installs only registry packages: a URL pinned in package.json is never fetched', async () => {
    const id = await session();
    const run = await execute(id, {
      files: [
        {
          path: 'package.json',
          content: '{"dependencies":{"is-number":"http://127.0.0.1:9/is-number.tgz"}}',
        },
      ],
      code: "import isNumber from 'is-number';\nconsole.log('ran');",
    });
    expect(run.status).toBe(200);
    expect(run.body.exitCode).not.toBe(0);
    expect(run.body.stdout).toBe('');
    expect(run.body.stderr).toContain('only registry packages');
  });

  it('reports an install failure as an ordinary failed run', async () => {
    const id = await session();
    const run = await execute(id, {
      code: "import x from 'this-package-does-not-exist-sbx-4242';\nconsole.log('ran');",
    });
    expect(run.status).toBe(200);
    expect(run.body.exitCode).not.toBe(0);
    expect(run.body.stdout).toBe('');
    expect(run.body.stderr).toContain('this-package-does-not-exist-sbx-4242');
  });
});
