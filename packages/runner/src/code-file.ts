/**
 * The first line added to a `code` run: ES module code with `require`, `__filename` and
 * `__dirname` available, as in CommonJS. They are globals, not module bindings, so code that
 * declares its own (`const require = createRequire(import.meta.url)`) still compiles. It has no
 * newline, so line numbers stay the user's.
 */
export const CODE_PRELUDE =
  "import { createRequire as __sandboxCreateRequire } from 'node:module';" +
  "import { fileURLToPath as __sandboxFileURLToPath } from 'node:url';" +
  "import { dirname as __sandboxDirname } from 'node:path';" +
  'globalThis.require = __sandboxCreateRequire(import.meta.url);' +
  'globalThis.__filename = __sandboxFileURLToPath(import.meta.url);' +
  'globalThis.__dirname = __sandboxDirname(globalThis.__filename);';

/** A code run's source file: hidden, unique, and removed after the run. */
export const CODE_FILE_PREFIX = '.sandbox-code-';

export function codeSource(code: string): string {
  // A leading shebang must stay first to remain valid.
  if (code.startsWith('#!')) {
    const end = code.indexOf('\n');
    return end === -1 ? code : `${code.slice(0, end + 1)}${CODE_PRELUDE}${code.slice(end + 1)}`;
  }
  return CODE_PRELUDE + code;
}
