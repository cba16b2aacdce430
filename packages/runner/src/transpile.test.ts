import { nodeCanResolve } from './transpile';

describe('nodeCanResolve', () => {
  it('accepts code whose relative imports Node resolves by itself', () => {
    expect(
      nodeCanResolve("import x from 'pkg'; import d from './data.json' with { type: 'json' };"),
    ).toBe(true);
    expect(nodeCanResolve("const m = await import('./lib/util.mjs'); require('../x.js');")).toBe(
      true,
    );
  });

  it.each([
    "import a from './a.ts'",
    "import a from './a'",
    "import a from '../dir/'",
    "require('./b.tsx')",
  ])('sends %j to tsx', (code) => {
    expect(nodeCanResolve(code)).toBe(false);
  });
});
