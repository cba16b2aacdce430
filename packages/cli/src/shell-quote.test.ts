import { execFileSync } from 'node:child_process';
import { shellQuote } from './shell-quote';

describe('shellQuote', () => {
  it('leaves plain words as they are', () => {
    expect(shellQuote(['ls', '-la', '/workspace/src', 'a.b,c:d@e%f+g'])).toBe(
      'ls -la /workspace/src a.b,c:d@e%f+g',
    );
  });

  it('single-quotes words with spaces, shell syntax or newlines', () => {
    expect(shellQuote(['printf', '%s\n', 'a b'])).toBe("printf '%s\n' 'a b'");
    expect(shellQuote(['echo', '$HOME', '*', 'a;b', '~', 'x|y'])).toBe(
      "echo '$HOME' '*' 'a;b' '~' 'x|y'",
    );
  });

  it('quotes a word with an = so that it is not read as an assignment', () => {
    expect(shellQuote(['A=b', 'env'])).toBe("'A=b' env");
  });

  it('closes and reopens the quotes around an embedded single quote', () => {
    expect(shellQuote(["it's"])).toBe(`'it'\\''s'`);
    expect(shellQuote(["'"])).toBe(`''\\'''`);
  });

  it('keeps an empty argument as an empty word', () => {
    expect(shellQuote(['printf', '[%s]', ''])).toBe("printf '[%s]' ''");
  });

  it('gives a shell back exactly the argv it was given', () => {
    const argv = ['a b', '', "it's", '$HOME', '"q"', 'back\\slash', 'new\nline', '*', '-n'];
    // The shell prints each argument it received as [arg] on its own.
    const script = `printf '[%s]\\n' ${shellQuote(argv)}`;
    const printed = execFileSync('/bin/sh', ['-c', script], { encoding: 'utf8' });
    expect(printed).toBe(argv.map((arg) => `[${arg}]\n`).join(''));
  });
});
