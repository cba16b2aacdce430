import { parse } from 'acorn';
import { IMPORTER, mayBeTypeScript, rewriteImports, type Parse } from './cell-source';

const parser = (): Parse => parse as unknown as Parse;
const rewrite = (code: string) => rewriteImports(code, parser);
const call = (specifier: string) => `await ${IMPORTER}(${specifier})`;

describe('rewriteImports', () => {
  it.each([
    ["import fs from 'node:fs';", `const { default: fs } = ${call("'node:fs'")};`],
    ['import * as path from "node:path"', `const path = ${call('"node:path"')};`],
    ["import { a, b as c } from 'm';", `const { a, b: c } = ${call("'m'")};`],
    ["import d, { a } from 'm'", `const { default: d, a } = ${call("'m'")};`],
    ["import d, * as ns from 'm'", `const ns = ${call("'m'")}, { default: d } = ns;`],
    ["import 'side-effect';", `${call("'side-effect'")};`],
    [
      "import data from './d.json' with { type: 'json' };",
      `const { default: data } = await ${IMPORTER}('./d.json', { with: { type: 'json' } });`,
    ],
    ["const m = await import('m');", `const m = await ${IMPORTER}('m');`],
  ])('%s', (source, expected) => {
    expect(rewrite(source)).toBe(expected);
  });

  it('keeps the line count of a multi-line import', () => {
    const out = rewrite("import {\n  a,\n  b,\n} from 'm';\na + b");
    expect(out.split('\n')).toHaveLength(5);
    expect(out).toContain(`const { a, b } = ${call("'m'")};`);
  });

  it('leaves `import` in strings, comments and templates alone', () => {
    const code =
      "const s = \"import x from 'y'\"; // import('z')\n`import(${s})`; /* import 'q' */";
    expect(rewrite(code)).toBe(code);
  });

  it('leaves code that does not parse, or never says import, as it is', () => {
    expect(rewrite("import x from 'm'; let = ;")).toBe("import x from 'm'; let = ;");
    const important = 'const important = 1;';
    const parsing = jest.fn(parser);
    expect(rewriteImports(important, parsing)).toBe(important);
    expect(parsing).not.toHaveBeenCalled();
  });
});

describe.each([
  {
    verdict: 'sends %s through esbuild',
    typeScript: true,
    cells: [
      'const n: number = 1',
      'f<string>(x)',
      'function f(a?) {}',
      'x!.y',
      '@sealed class A {}',
      'function f(a);\nfunction f(a) { return a }',
      'interface I {}',
      'type T = string',
      'enum E { A }',
      'x as unknown',
      'x satisfies T',
      'class A { constructor(private a) {} }',
      'class A { readonly a = 1 }',
      "import fs = require('fs')",
      'using r = resource()',
      'declare const y',
      'class A { m(a); m(a) { return a } }',
    ],
  },
  {
    verdict: 'runs %s as it is',
    typeScript: false,
    cells: [
      'x + 1',
      'total * 2',
      'console.log(x);',
      'const a = [1, 2].map((v) => v * 2)\na',
      'await f()',
    ],
  },
])('mayBeTypeScript', ({ verdict, typeScript, cells }) => {
  it.each(cells)(verdict, (code) => {
    expect(mayBeTypeScript(code)).toBe(typeScript);
  });
});
