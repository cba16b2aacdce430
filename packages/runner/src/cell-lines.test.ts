import { decodeMappings, sourceStack } from './cell-lines';

/**
 * esbuild's map of this cell, stripped of its types (from the sandbox image's esbuild):
 * `interface A { a: string }\ntype B = number;\nconst x: number = 1;\n\nfunction f(n: number): never {\n  throw new Error('…');\n}\nf(x);`
 * became `const x = 1;\nfunction f(n) {\n  throw new Error('…');\n}\nf(x);\n`.
 */
const MAPPINGS =
  'AAEA,MAAM,IAAY;AAElB,SAAS,EAAE,GAAkB;AAC3B,QAAM,IAAI,MAAM,iBAAiB;AACnC;AACA,EAAE,CAAC;';

describe('sourceStack', () => {
  it("points a cell's frames at its TypeScript lines and columns", () => {
    const stack = 'Error: boom\n    at f (/workspace/<cell-4>:3:9)\n    at /workspace/<cell-4>:5:1';
    expect(sourceStack(stack, MAPPINGS)).toBe(
      'Error: boom\n    at f (/workspace/<cell-4>:6:9)\n    at /workspace/<cell-4>:8:1',
    );
  });

  it('leaves other frames, and lines the map does not know, alone', () => {
    const stack = 'Error\n    at g (node:internal/x:1:2)\n    at /workspace/<cell-1>:40:1';
    expect(sourceStack(stack, MAPPINGS)).toBe(stack);
  });
});

describe('decodeMappings', () => {
  it('decodes each line’s segments to source positions', () => {
    const lines = decodeMappings(MAPPINGS);
    expect(lines[0]?.[0]).toEqual([0, 2, 0]);
    expect(lines[2]?.[1]).toEqual([8, 5, 8]);
  });
});
