import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '../..');
/** The SDK's builds (`pnpm build` makes them). */
export const SDK_DIST = join(ROOT, 'packages/sdk/dist');
/** The Bun and Deno of the workspace's dev dependencies. */
export const BUN = join(ROOT, 'node_modules/@oven/bun-linux-x64/bin/bun');
export const DENO = join(ROOT, 'node_modules/@deno/linux-x64-glibc/deno');

/** Deno's arguments to run `script` of the scratch folder: loopback, the environment, the map. */
export const denoRun = (script: string): string[] => [
  'run',
  '--allow-net=127.0.0.1',
  '--allow-env',
  '--import-map=import-map.json',
  script,
];

/**
 * A scratch folder for the tests of a `describe`, made before the first: `files` written in it
 * and an import map by which Deno finds the SDK's one dependency (as an app's deno.json would).
 * Removed after the last test.
 */
export function useScratch(
  prefix: string,
  files: Record<string, string>,
): { readonly dir: string } {
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    const parser = realpathSync(join(ROOT, 'packages/sdk/node_modules/eventsource-parser'));
    await writeFile(
      join(dir, 'import-map.json'),
      JSON.stringify({ imports: { 'eventsource-parser': `file://${parser}/dist/index.js` } }),
    );
  });
  afterAll(() => (dir === undefined ? undefined : rm(dir, { recursive: true, force: true })));
  return {
    get dir() {
      if (dir === undefined) throw new Error('the scratch folder is made in beforeAll');
      return dir;
    },
  };
}

/** Runs `file args` in `cwd`, its environment PATH, HOME and the SDK's key and URL only. */
export async function runWithSdk(
  [file, args]: [string, string[]],
  cwd: string,
  sdk: { key: string; url: string },
): Promise<string> {
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SANDBOX_API_KEY: sdk.key,
    SANDBOX_API_URL: sdk.url,
  };
  const { stdout } = await promisify(execFile)(file, args, { env, cwd });
  return stdout;
}
