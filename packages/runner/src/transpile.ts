import { posix } from 'node:path';

/** esbuild as installed with tsx in the sandbox image. */
const ESBUILD_PATHS = [
  '/usr/local/lib/node_modules/tsx/node_modules/esbuild',
  '/usr/local/lib/node_modules/esbuild',
];
const TS_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts']);
const RELATIVE_SPECIFIER =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]*|\/[^'"]*)['"]/g;

interface Esbuild {
  transform(
    code: string,
    options: Record<string, unknown>,
  ): Promise<{ code: string; warnings: unknown[] }>;
}

let esbuild: Esbuild | null | undefined;

function loadEsbuild(): Esbuild | null {
  if (esbuild !== undefined) return esbuild;
  esbuild = null;
  for (const path of ESBUILD_PATHS) {
    try {
      // A path known only at run time, inside the sandbox image.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      esbuild = require(path) as Esbuild;
      break;
    } catch {
      // not here
    }
  }
  return esbuild;
}

/**
 * Whether plain Node can run the code once its types are stripped: every relative import
 * names a file Node resolves by itself (.js, .mjs, .json...). TypeScript files and
 * extensionless or directory imports need the tsx loader.
 */
export function nodeCanResolve(code: string): boolean {
  for (const match of code.matchAll(RELATIVE_SPECIFIER)) {
    const specifier = match[1] ?? '';
    const extension = posix.extname(specifier);
    if (extension === '' || TS_EXTENSIONS.has(extension) || specifier.endsWith('/')) return false;
  }
  return true;
}

/**
 * The code as an ES module for plain Node (types stripped by esbuild, kept in one long-lived
 * service, with an inline source map naming `sourceName`), or undefined when it needs tsx.
 */
export async function transpileForNode(
  code: string,
  sourceName: string,
): Promise<string | undefined> {
  const service = loadEsbuild();
  if (service === null || !nodeCanResolve(code)) return undefined;
  try {
    const result = await service.transform(code, {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      supported: { 'import-attributes': true },
      sourcemap: 'inline',
      sourcefile: sourceName,
    });
    return result.code;
  } catch {
    return undefined; // tsx reports the syntax error the usual way
  }
}
