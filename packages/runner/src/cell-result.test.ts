import { cellStack, displayed, errorOf, resultOf } from './cell-result';

describe('resultOf', () => {
  it('gives inspect text and JSON for a plain object', () => {
    expect(resultOf({ a: [1, 'x'] }, true)).toEqual({
      data: { 'text/plain': "{ a: [ 1, 'x' ] }", 'application/json': '{"a":[1,"x"]}' },
      isMain: true,
    });
  });

  it('gives text only where JSON cannot say the value', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [cyclic, 10n, () => 1, Symbol('s'), { n: 1n }]) {
      expect(Object.keys(resultOf(value, false).data)).toEqual(['text/plain']);
    }
  });

  it('quotes a string as inspect does', () => {
    expect(resultOf('hi', true).data).toEqual({
      'text/plain': "'hi'",
      'application/json': '"hi"',
    });
  });
});

describe('errorOf', () => {
  it('keeps an error’s name, message and stack, less the host’s frames', () => {
    const err = new TypeError('boom');
    err.stack =
      'TypeError: boom\n    at <cell-1>:1:7\n    at runCell (/opt/host.js:3:1)\n    at Script.runInThisContext (node:vm:137:12)\n' +
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)';
    expect(errorOf(err, '/opt/host.js')).toEqual({
      name: 'TypeError',
      message: 'boom',
      stack: 'TypeError: boom\n    at <cell-1>:1:7',
    });
  });

  it('describes a thrown non-error', () => {
    expect(errorOf('nope')).toEqual({
      name: 'Error',
      message: "Uncaught 'nope'",
      stack: "Uncaught 'nope'",
    });
  });

  it('filters nothing without a host file', () => {
    expect(cellStack('a\nb', 'zzz')).toBe('a\nb');
  });
});

describe('displayed', () => {
  it('keeps a MIME bundle, adding text/plain', () => {
    expect(displayed({ 'text/html': '<b>x</b>' })).toEqual({
      data: { 'text/html': '<b>x</b>', 'text/plain': '[text/html]' },
      isMain: false,
    });
  });

  it('gives bytes base64-encoded', () => {
    const png = displayed({ 'image/png': new Uint8Array([1, 2, 3]), 'text/plain': 'a dot' });
    expect(png.data).toEqual({ 'image/png': 'AQID', 'text/plain': 'a dot' });
  });

  it('shows any other value as a result', () => {
    expect(displayed({ a: 1 })).toEqual({
      data: { 'text/plain': '{ a: 1 }', 'application/json': '{"a":1}' },
      isMain: false,
    });
    expect(displayed({}).data['text/plain']).toBe('{}');
  });
});
