/**
 * A code run is an ES module with `require`, `__filename` and `__dirname` available, as in
 * CommonJS, and code that declares its own (`const require = createRequire(import.meta.url)`)
 * still compiles. `require` is a global (resolving from the code's file); `__filename` and
 * `__dirname` are module constants that esbuild substitutes (ESBUILD_DEFINE) only where the
 * code does not bind those names itself, so that packages never see them.
 */
export const ESBUILD_BANNER =
  "import { createRequire as __sandboxCreateRequire } from 'node:module';" +
  "import { fileURLToPath as __sandboxFileURLToPath } from 'node:url';" +
  "import { dirname as __sandboxDirnameOf } from 'node:path';" +
  'globalThis.require ??= __sandboxCreateRequire(import.meta.url);' +
  'const __sandboxFilename = __sandboxFileURLToPath(import.meta.url);' +
  'const __sandboxDirname = __sandboxDirnameOf(__sandboxFilename);';

export const ESBUILD_DEFINE = { __filename: '__sandboxFilename', __dirname: '__sandboxDirname' };

/**
 * The first line added to code that tsx runs (when esbuild cannot): all three as globals. It
 * has no newline, so line numbers stay the user's.
 */
export const CODE_PRELUDE =
  "import { createRequire as __sandboxCreateRequire } from 'node:module';" +
  "import { fileURLToPath as __sandboxFileURLToPath } from 'node:url';" +
  "import { dirname as __sandboxDirname } from 'node:path';" +
  'globalThis.require ??= __sandboxCreateRequire(import.meta.url);' +
  'globalThis.__filename ??= __sandboxFileURLToPath(import.meta.url);' +
  'globalThis.__dirname ??= __sandboxDirname(globalThis.__filename);';

/** A code run's source file: hidden, unique, and removed after the run. */
export const CODE_FILE_PREFIX = '.sandbox-code-';

/** The code as tsx runs it, with CODE_PRELUDE. */
export function codeSource(code: string): string {
  // A leading shebang must stay first to remain valid.
  if (code.startsWith('#!')) {
    const end = code.indexOf('\n');
    return end === -1 ? code : `${code.slice(0, end + 1)}${CODE_PRELUDE}${code.slice(end + 1)}`;
  }
  return CODE_PRELUDE + code;
}
