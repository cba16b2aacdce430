import { builtinModules } from 'node:module';
import { readFile, stat } from 'node:fs/promises';
import { posix } from 'node:path';

const BUILTINS = new Set(builtinModules.map((name) => name.split('/')[0]));
const PACKAGE_NAME = /^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i;

/** Drops comments (roughly, keeping strings intact enough for import specifiers). */
function stripComments(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:'"`\\])\/\/[^\n]*/g, '$1');
}

const SPECIFIERS = [
  /\bimport\s+(?:[\w*{}\s,$]+\s+from\s+)?['"]([^'"]+)['"]/g,
  /\bexport\s+[\w*{}\s,$]+\s+from\s+['"]([^'"]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** The package a bare specifier names (`pkg/sub` → `pkg`, `@s/p/x` → `@s/p`), else undefined. */
export function packageOf(specifier: string): string | undefined {
  if (/^[./]|^[a-z]+:/i.test(specifier)) return undefined; // relative, absolute, node:, URLs
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  if (name === undefined || !PACKAGE_NAME.test(name) || BUILTINS.has(name)) return undefined;
  return name;
}

/** Packages imported by `code` (static, dynamic and require), sorted, without built-ins. */
export function importedPackages(code: string): string[] {
  const source = stripComments(code);
  const names = new Set<string>();
  for (const pattern of SPECIFIERS) {
    for (const match of source.matchAll(pattern)) {
      const name = packageOf(match[1] ?? '');
      if (name !== undefined) names.add(name);
    }
  }
  return [...names].sort();
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Whether Node would find `name` from `dir` (a node_modules on the way up). */
async function installed(name: string, dir: string): Promise<boolean> {
  for (let current = dir; ; current = posix.dirname(current)) {
    if (await exists(posix.join(current, 'node_modules', name, 'package.json'))) return true;
    if (current === '/') return false;
  }
}

export interface PackageRequest {
  name: string;
  /** Version range from the working tree's package.json, else `latest`. */
  spec: string;
}

/** The packages `code` imports that are not installed under `cwd`, with their pinned ranges. */
export async function missingPackages(code: string, cwd: string): Promise<PackageRequest[]> {
  let pins: Record<string, unknown> = {};
  try {
    const manifest = JSON.parse(await readFile(posix.join(cwd, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, unknown> | undefined
    >;
    pins = {
      ...manifest.devDependencies,
      ...manifest.optionalDependencies,
      ...manifest.dependencies,
    };
  } catch {
    // no (valid) package.json: latest versions
  }
  const missing: PackageRequest[] = [];
  for (const name of importedPackages(code)) {
    if (await installed(name, cwd)) continue;
    const pinned = pins[name];
    missing.push({ name, spec: typeof pinned === 'string' && pinned !== '' ? pinned : 'latest' });
  }
  return missing;
}
