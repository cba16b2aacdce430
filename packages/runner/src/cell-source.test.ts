import { parse } from 'acorn';
import { IMPORTER, rewriteImports, type Parse } from './cell-source';

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
