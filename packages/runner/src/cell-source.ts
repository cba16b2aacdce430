/*
 * A cell's source as its context's process runs it: a classic script (so that its top-level
 * declarations stay in the process's global scope for the next cell), with static ES imports
 * made dynamic. Pure: no Node state, unit-tested beside.
 */

/** `import <clause> from 'm'` and `import 'm'`, at the start of a line. */
const STATIC_IMPORT =
  /^([ \t]*)import\s+(?:([\w$*{},\s]+?)\s+from\s*)?(['"])([^'"\n]+)\3(?:\s+(?:with|assert)\s*\{[^}]*\})?[ \t]*;?/gm;

/** `{ a, b as c }` as a destructuring pattern: `{ a, b: c }`. */
function namedPattern(named: string): string {
  const inner = named
    .replace(/^\{|\}$/g, '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => part.replace(/^([\w$]+)\s+as\s+([\w$]+)$/, '$1: $2'));
  return inner.join(', ');
}

/** The declaration an import clause becomes, given the expression of the module namespace. */
function declarationOf(clause: string, namespace: string): string {
  const trimmed = clause.trim();
  const star = /^(?:([\w$]+)\s*,\s*)?\*\s*as\s+([\w$]+)$/.exec(trimmed);
  if (star !== null) {
    const [, defaultName, name] = star;
    const extra = defaultName === undefined ? '' : `, { default: ${defaultName} } = ${name}`;
    return `var ${name} = ${namespace}${extra};`;
  }
  const match = /^(?:([\w$]+)\s*,?\s*)?(\{[\s\S]*\})?$/.exec(trimmed);
  if (match === null) return `var ${trimmed} = ${namespace};`;
  const [, defaultName, named] = match;
  const parts = [
    ...(defaultName === undefined ? [] : [`default: ${defaultName}`]),
    ...(named === undefined || namedPattern(named) === '' ? [] : [namedPattern(named)]),
  ];
  return `var { ${parts.join(', ')} } = ${namespace};`;
}

/**
 * Static imports made dynamic: `import x, { a as b } from 'm'` becomes
 * `var { default: x, a: b } = await import('m');` (a `var`, so that a cell can be run again).
 * Line breaks are kept, so that line numbers stay the cell's.
 */
export function dynamicImports(code: string): string {
  return code.replace(
    STATIC_IMPORT,
    (whole, indent: string, clause: string | undefined, quote: string, specifier: string) => {
      const namespace = `await import(${quote}${specifier}${quote})`;
      const statement = clause === undefined ? `${namespace};` : declarationOf(clause, namespace);
      const breaks = whole.split('\n').length - 1;
      return `${indent}${statement}${'\n'.repeat(breaks)}`;
    },
  );
}

/** Whether the code uses `await` outside any function (roughly: anywhere, as a word). */
export function mayAwait(code: string): boolean {
  return /\bawait\b/.test(code);
}
