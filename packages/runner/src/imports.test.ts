import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importedPackages, missingPackages, packageOf } from './imports';

describe('importedPackages', () => {
  it('finds static, dynamic and require imports, scoped packages and subpaths', () => {
    const code = `
      import x from 'lodash';
      import { a } from "@scope/pkg/sub/path";
      import 'side-effect';
      export { y } from 're-export';
      const z = await import('dynamic-one');
      const w = require('cjs-pkg/lib');
      import fs from 'node:fs';
      import path from 'path';
      import fsp from 'fs/promises';
      import local from './local.ts';
      // import commented from 'not-me';
      /* require('nor-me') */
    `;
    expect(importedPackages(code)).toEqual([
      '@scope/pkg',
      'cjs-pkg',
      'dynamic-one',
      'lodash',
      're-export',
      'side-effect',
    ]);
  });

  it('tells bare package names from everything else', () => {
    expect(packageOf('react-dom/client')).toBe('react-dom');
    expect(packageOf('@a/b')).toBe('@a/b');
    for (const spec of ['./x', '../x', '/abs', 'node:fs', 'https://x.y/z.js', 'crypto']) {
      expect(packageOf(spec)).toBeUndefined();
    }
  });
});

describe('missingPackages', () => {
  it('skips what is installed and takes ranges from package.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'imp-'));
    mkdirSync(join(dir, 'node_modules', 'present'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', 'present', 'package.json'), '{}');
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ dependencies: { pinned: '^1.2.0' } }),
    );
    const code = "import a from 'present'; import b from 'pinned'; import c from 'fresh';";
    expect(await missingPackages(code, dir)).toEqual([
      { name: 'fresh', spec: 'latest' },
      { name: 'pinned', spec: '^1.2.0' },
    ]);
  });
});
