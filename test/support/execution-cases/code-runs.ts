import type { AccountFixture } from '../use-stack';
import { executeIn } from './context';

/** TypeScript and JavaScript modules, and what they import. */
function codeRuns(t: AccountFixture): void {
  const execute = executeIn(t);
  describe('code runs', () => {
    it('runs TypeScript as an ES module with top-level await, require and relative imports', async () => {
      const run = await execute({
        files: [
          {
            path: 'lib/greet.ts',
            content: 'export const greet = (n: string): string => `hello ${n}`;\n',
          },
        ],
        code: [
          "import { greet } from './lib/greet.ts';",
          "const os = require('node:os');",
          'const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));',
          'await wait(10);',
          "console.log(greet('ts'), typeof os.cpus, __dirname);",
          "console.error('to stderr');",
        ].join('\n'),
      });
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({
        stdout: 'hello ts function /workspace\n',
        stderr: 'to stderr\n',
        exitCode: 0,
        timedOut: false,
      });
      expect(run.body.filesWritten).toEqual(['lib/greet.ts']);
    });

    it('imports .ts default exports, ES module .js and CommonJS files together', async () => {
      const run = await execute({
        workingDir: 'mixed',
        files: [
          { path: 'mixed/lib/a.js', content: 'export const a = 1;\n' },
          {
            path: 'mixed/lib/double.ts',
            content: 'export default (n: number): number => n * 2;\n',
          },
          {
            path: 'mixed/lib/greeter.ts',
            content: "export default class Greeter {\n  hi(): string { return 'hi'; }\n}\n",
          },
          {
            path: 'mixed/lib/legacy.cjs',
            content: "module.exports = { kind: typeof require('node:os').cpus };\n",
          },
        ],
        code: [
          "import { a } from './lib/a.js';",
          "import double from './lib/double.ts';",
          "import Greeter from './lib/greeter';",
          "import legacy from './lib/legacy.cjs';",
          'console.log(a, double(21), new Greeter().hi(), legacy.kind);',
        ].join('\n'),
      });
      expect(run.body).toMatchObject({ stdout: '1 42 hi function\n', stderr: '', exitCode: 0 });
    });

    it('runs ES module code that declares its own require, __filename and __dirname', async () => {
      const run = await execute({
        code: [
          "import { createRequire } from 'node:module';",
          "import { fileURLToPath } from 'node:url';",
          "import path from 'node:path';",
          'const require = createRequire(import.meta.url);',
          'const __filename = fileURLToPath(import.meta.url);',
          'const __dirname = path.dirname(__filename);',
          "console.log(typeof require('node:os').cpus, __dirname);",
        ].join('\n'),
      });
      expect(run.body).toMatchObject({ stdout: 'function /workspace\n', exitCode: 0 });
    });
  });
}

/** __dirname and __filename, the import time bound, errors, the working directory. */
function codeRunDetails(t: AccountFixture): void {
  const execute = executeIn(t);
  describe('code runs: paths, time, errors and working directory', () => {
    it('gives __dirname and __filename to the code, never to the packages it imports', async () => {
      const run = await execute({
        workingDir: 'probe-app',
        files: [
          {
            path: 'probe-app/node_modules/probe/package.json',
            content: '{"name":"probe","type":"module","main":"index.js"}',
          },
          {
            path: 'probe-app/node_modules/probe/index.js',
            content: 'export const seen = [typeof __dirname, typeof __filename].join();\n',
          },
        ],
        code: "import { seen } from 'probe';\nconsole.log(seen, __dirname);",
      });
      expect(run.body).toMatchObject({
        stdout: 'undefined,undefined /workspace/probe-app\n',
        exitCode: 0,
      });
    });

    it('bounds the time spent reading imported files by the run timeout', async () => {
      // A FIFO that nobody writes to: reading it blocks for ever.
      await execute({ command: 'mkfifo -m 600 never.ts' });
      const run = await execute({
        code: "import x from './never.ts';\nconsole.log(x);",
        timeout: 2,
      });
      expect(run.status).toBe(408);
      expect(run.body).toMatchObject({ error: { code: 'execution_timeout' } });
      // Unblock whatever still waits on it, and the session goes on.
      const after = await execute({
        command: 'timeout 2 sh -c "echo > never.ts"; rm -f never.ts; echo ok',
      });
      expect(after.body.stdout).toBe('ok\n');
    });

    it('reports a thrown error with a non-zero exit code and the line of the user code', async () => {
      const run = await execute({ code: "const x = 1;\nthrow new Error('boom ' + x);" });
      expect(run.body.exitCode).not.toBe(0);
      expect(run.body.stderr).toContain('boom 1');
      expect(run.body.stderr).toMatch(/\.mts:2/);
    });

    it('runs JavaScript in a working directory', async () => {
      const run = await execute({
        files: [{ path: 'app/data.json', content: '{"n": 41}' }],
        workingDir: 'app',
        code: "import data from './data.json' with { type: 'json' };\nconsole.log(data.n + 1, process.cwd());",
      });
      expect(run.body).toMatchObject({ stdout: '42 /workspace/app\n', exitCode: 0 });
    });
  });
}

/** Code runs: modules and imports, paths, the run timeout, errors. */
export const codeRunCases: ((t: AccountFixture) => void)[] = [codeRuns, codeRunDetails];
