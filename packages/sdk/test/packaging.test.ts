import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The built package as its users' compilers see it (run after `pnpm build`): an ES module and
 * a CommonJS module, each under Node16 resolution, get the types of their own build.
 */
const SDK = resolve(__dirname, '..');

function diagnosticsOf(file: string, source: string, type: 'module' | 'commonjs'): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-consumer-'));
  try {
    mkdirSync(join(dir, 'node_modules', '@sandbox'), { recursive: true });
    symlinkSync(SDK, join(dir, 'node_modules', '@sandbox', 'sdk'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type }));
    writeFileSync(join(dir, file), source);
    const program = ts.createProgram([join(dir, file)], {
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      types: [],
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    });
    const resolved = program
      .getSourceFiles()
      .map((f) => f.fileName)
      .filter((name) => name.includes('/packages/sdk/dist/'));
    return [
      ...ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      `types from: ${[...new Set(resolved.map((name) => name.split('/dist/')[1]?.split('/')[0]))].join(',')}`,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const use = `
  const sandbox = await Sandbox.create({ apiKey: 'k' });
  const result: ExecutionResult = await sandbox.run('console.log(1)');
  const code: number = result.exitCode;
  // @ts-expect-error: not a method of the SDK
  sandbox.notAMethod();
  export { code };
`;

describe('the built package', () => {
  it('gives an ES module the ESM build and its types', () => {
    expect(
      diagnosticsOf(
        'consumer.mts',
        `import { Sandbox, type ExecutionResult } from '@sandbox/sdk';\n${use}`,
        'module',
      ),
    ).toEqual(['types from: esm']);
  });

  it('gives a CommonJS module the CommonJS build and its types', () => {
    expect(
      diagnosticsOf(
        'consumer.cts',
        `import { Sandbox, type ExecutionResult } from '@sandbox/sdk';\nasync function main() {\n${use.replace('export { code };', 'return code;')}\n}\nvoid main();`,
        'commonjs',
      ),
    ).toEqual(['types from: cjs']);
  });
});
