import { dynamicImports, mayAwait } from './cell-source';

describe('dynamicImports', () => {
  it.each([
    ["import fs from 'node:fs';", "var { default: fs } = await import('node:fs');"],
    ['import * as path from "node:path"', 'var path = await import("node:path");'],
    ["import { a, b as c } from 'm';", "var { a, b: c } = await import('m');"],
    ["import d, { a } from 'm'", "var { default: d, a } = await import('m');"],
    ["import d, * as ns from 'm'", "var ns = await import('m'), { default: d } = ns;"],
    ["import 'side-effect';", "await import('side-effect');"],
    [
      "import data from './d.json' with { type: 'json' };",
      "var { default: data } = await import('./d.json');",
    ],
  ])('%s', (source, expected) => {
    expect(dynamicImports(source)).toBe(expected);
  });

  it('keeps the line count of a multi-line import', () => {
    const out = dynamicImports("import {\n  a,\n  b,\n} from 'm';\na + b");
    expect(out.split('\n')).toHaveLength(5);
    expect(out).toContain("var { a, b } = await import('m');");
  });

  it('leaves dynamic imports and other code alone', () => {
    const code = "const m = await import('m');\nconst important = 1;";
    expect(dynamicImports(code)).toBe(code);
  });
});

describe('mayAwait', () => {
  it('finds await as a word only', () => {
    expect(mayAwait('await x')).toBe(true);
    expect(mayAwait('const awaited = 1')).toBe(false);
  });
});
