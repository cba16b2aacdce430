import { existsSync } from 'node:fs';
import { join, posix } from 'node:path';
import { ESBUILD_BANNER, ESBUILD_DEFINE } from './code-file';

/** esbuild as installed with tsx in the sandbox image. */
const ESBUILD_PATHS = [
  '/usr/local/lib/node_modules/tsx/node_modules/esbuild',
  '/usr/local/lib/node_modules/esbuild',
];
/**
 * What starts esbuild's service in the image: its binary without the once-a-second ping
 * (native/esbuild-service.sh), which would keep every idle session's runner awake.
 */
const QUIET_SERVICE = join(__dirname, 'esbuild-service');
const TS_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts']);
const RELATIVE_SPECIFIER =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]*|\/[^'"]*)['"]/g;

interface Esbuild {
  transform(
    code: string,
    options: Record<string, unknown>,
  ): Promise<{ code: string; map?: string; warnings: unknown[] }>;
  build(options: Record<string, unknown>): Promise<{ outputFiles?: { text: string }[] }>;
}

let esbuild: Esbuild | null | undefined;

function loadEsbuild(): Esbuild | null {
  if (esbuild !== undefined) return esbuild;
  esbuild = null;
  // esbuild reads it once, when loaded; runs must not inherit it.
  const quiet = existsSync(QUIET_SERVICE);
  if (quiet) process.env.ESBUILD_BINARY_PATH = QUIET_SERVICE;
  try {
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
  } finally {
    if (quiet) delete process.env.ESBUILD_BINARY_PATH;
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
 * The code as an ES module for plain Node, by esbuild (kept in one long-lived service), with an
 * inline source map naming `sourceName`; undefined when esbuild cannot (tsx then runs it, and
 * reports the error the usual way). Code whose relative imports Node resolves by itself only
 * loses its types. Code that imports TypeScript, extensionless or directory paths is bundled
 * with the workspace files it imports — every one of them an ES module whatever its extension,
 * with CommonJS files wrapped — while packages stay imports, resolved from `cwd` at run time.
 */
export async function transpileForNode(
  code: string,
  sourceName: string,
  cwd: string,
): Promise<string | undefined> {
  const service = loadEsbuild();
  if (service === null) return undefined;
  // The banner comes first, before any bundled module: CommonJS files bundled from the
  // workspace `require` packages through the global `require` it sets.
  const common = {
    format: 'esm',
    target: 'node20',
    platform: 'node',
    supported: { 'import-attributes': true },
    sourcemap: 'inline',
    define: ESBUILD_DEFINE,
  };
  try {
    if (nodeCanResolve(code)) {
      const result = await service.transform(code, {
        ...common,
        banner: ESBUILD_BANNER,
        loader: 'ts',
        sourcefile: sourceName,
      });
      return result.code;
    }
    const result = await service.build({
      ...common,
      stdin: { contents: code, loader: 'ts', resolveDir: cwd, sourcefile: sourceName },
      bundle: true,
      packages: 'external',
      write: false,
      logLevel: 'silent',
      banner: { js: ESBUILD_BANNER },
    });
    return result.outputFiles?.[0]?.text;
  } catch {
    return undefined;
  }
}

/** The transpiler's warm-up, once started (`warmUpTranspiler`). */
let warming: Promise<void> = Promise.resolve();

/** Starts esbuild's service ahead of the first code run (in the background; failures ignored). */
export function warmUpTranspiler(): void {
  const service = loadEsbuild();
  if (service === null) return;
  warming = service.transform('const warm: number = 1;', { loader: 'ts' }).then(
    () => undefined,
    () => undefined,
  );
}

/** Resolves when the transpiler's warm-up (if one was started) has ended. */
export function transpilerWarmed(): Promise<void> {
  return warming;
}

/**
 * A TypeScript cell as plain JavaScript statements (no module wrapper: imports stay imports,
 * every one kept, as a later cell may use what this one imports), with its source map's
 * `mappings`; a syntax error is thrown as esbuild reports it. As it is where esbuild is missing.
 */
export async function transpileCell(
  code: string,
  sourceName: string,
): Promise<{ code: string; mappings?: string }> {
  const service = loadEsbuild();
  if (service === null) return { code };
  const result = await service.transform(code, {
    loader: 'ts',
    target: 'node20',
    sourcefile: sourceName,
    sourcemap: 'external',
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    supported: { 'top-level-await': true },
  });
  try {
    const { mappings } = JSON.parse(result.map ?? '{}') as { mappings?: unknown };
    return typeof mappings === 'string' ? { code: result.code, mappings } : { code: result.code };
  } catch {
    return { code: result.code };
  }
}
