import * as render from './repl-render';

const { entryIncomplete, errorText, historyPath, isIncomplete, resultLines, stylesFor } = render;

const syntax = (message: string) => ({ error: { name: 'SyntaxError', message, stack: '' } });

describe('the REPL reads another line', () => {
  it.each([
    'cell.ts:1:23: ERROR: Unexpected end of file',
    'cell.ts:1:10: ERROR: Expected "}" but found end of file',
    'Unexpected end of input',
    'cell.ts:1:0: ERROR: Unterminated template literal',
  ])('when the cell stopped short: %s', (message) => {
    expect(isIncomplete(syntax(message))).toBe(true);
  });

  it('not for another syntax error, an error of another kind, or none', () => {
    expect(isIncomplete(syntax('Invalid or unexpected token'))).toBe(false);
    expect(isIncomplete(syntax('cell.ts:1:9: ERROR: Unterminated string literal'))).toBe(false);
    const thrown = { name: 'Error', message: 'Unexpected end of input', stack: '' };
    expect(isIncomplete({ error: thrown })).toBe(false);
    expect(isIncomplete({})).toBe(false);
  });
});

describe('an entry is cut short, judged at once by esbuild', () => {
  it.each([
    ['typescript', 'function total(list: number[]) {'],
    ['typescript', 'const n: number = (1 +'],
    ['typescript', 'const xs = [1,\n  2,'],
    ['typescript', 'const text = `line one'],
    ['typescript', 'config.'],
    ['javascript', 'if (x) {} else'],
  ] as const)('%s: %s', (language, code) => {
    expect(entryIncomplete(code, language)).toBe(true);
  });

  it.each([
    ['typescript', 'const n: number = 1'],
    ['typescript', "const s = 'open"],
    ['typescript', 'x++'],
    ['typescript', 'function total(list: number[]) {\n  return list.length\n}'],
    ['javascript', ')'],
    ['javascript', 'const n: number = ('], // not JavaScript: the cell says so
  ] as const)('not %s: %s', (language, code) => {
    expect(entryIncomplete(code, language)).toBe(false);
  });
});

describe("a cell's value on a terminal", () => {
  it('is its text, JSON left out', () => {
    const value = { 'text/plain': '{ a: 1 }', 'application/json': '{"a":1}', isMain: true };
    expect(resultLines(value)).toEqual(['{ a: 1 }']);
  });

  it('names what a terminal cannot show, with its size, without the stand-in text', () => {
    const png = Buffer.alloc(2000).toString('base64');
    const shown = {
      'image/svg+xml': '<svg/>',
      'image/png': png,
      'text/plain': '[image/svg+xml, image/png]',
      isMain: false,
    };
    expect(resultLines(shown)).toEqual([
      '[image/svg+xml, 6 B: not shown in a terminal]',
      '[image/png, 2.0 kB: not shown in a terminal]',
    ]);
  });

  it('keeps a text of its own beside the parts it names', () => {
    const shown = { 'text/html': '<b>hi</b>', 'text/plain': 'hi', isMain: false };
    expect(resultLines(shown)).toEqual(['[text/html, 9 B: not shown in a terminal]', 'hi']);
  });
});

it('prints an error as its stack, with name and message when the stack lacks them', () => {
  const stack = 'TypeError: x is not a function\n    at <cell-3>:1:1';
  expect(errorText({ name: 'TypeError', message: 'x is not a function', stack })).toBe(stack);
  expect(errorText({ name: 'Error', message: 'odd', stack: '    at <cell-1>:1:1' })).toBe(
    'Error: odd\n    at <cell-1>:1:1',
  );
});

it('keeps history in the config directory, or where SANDBOX_REPL_HISTORY says, or nowhere', () => {
  expect(historyPath({ HOME: '/home/u' })).toBe('/home/u/.config/sandbox/repl_history');
  expect(historyPath({ HOME: '/home/u', XDG_CONFIG_HOME: '/cfg' })).toBe(
    '/cfg/sandbox/repl_history',
  );
  expect(historyPath({ SANDBOX_REPL_HISTORY: '/tmp/h' })).toBe('/tmp/h');
  expect(historyPath({ SANDBOX_REPL_HISTORY: '' })).toBeUndefined();
});

it('colours only a terminal, and never with NO_COLOR', () => {
  expect(stylesFor(true, {}).red('x')).toBe('\x1b[31mx\x1b[0m');
  expect(stylesFor(false, {}).red('x')).toBe('x');
  expect(stylesFor(true, { NO_COLOR: '1' }).dim('x')).toBe('x');
});
