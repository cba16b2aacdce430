/** Words the shell reads as themselves: no quoting needed (`=` is left out: `A=b` first assigns). */
const SAFE_WORD = /^[A-Za-z0-9_@%+:,./-]+$/;

/**
 * One shell command line that runs exactly `args` as its argv: each argument in single quotes
 * (a single quote inside as `'\''`) unless it is a plain word, `''` for an empty one.
 *
 *     shellQuote(['printf', '%s\n', 'a b']) === "printf '%s\n' 'a b'"
 */
export function shellQuote(args: readonly string[]): string {
  return args.map(quoteWord).join(' ');
}

function quoteWord(word: string): string {
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
