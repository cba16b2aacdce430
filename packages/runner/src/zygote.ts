/**
 * A pre-started Node for the next code run. The runner has the spawner start it ahead of time;
 * it waits for one run on its stdin (a JSON line: the code file, working directory and
 * environment; then stdin ends, as /dev/null would), becomes the sandbox user in full, and
 * then that run: the same process, flags and semantics as `node file`, without paying Node's
 * start-up while the caller waits. It serves one run and exits with it. What the run used is
 * measured by the spawner and the runner, never reported by this process.
 */
import { mkdirSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { CPU_GROUP_EXIT_CODE, enterCpuGroup, splitsCpu } from './cpu-group';
import { becomeUser } from './identity';
import { RUNNER_DIR, zygoteWarmMarker as warmMarker } from './runner-dir';
import type { ZygoteRun } from './zygotes';

/** The run, from the runner; undefined when the runner went away first (stdin ended). */
function nextRun(): ZygoteRun | undefined {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buffer);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      return undefined;
    }
    if (n === 0) return undefined;
    const read = buffer.subarray(0, n);
    const end = read.indexOf(10);
    chunks.push(Buffer.from(end >= 0 ? read.subarray(0, end) : read));
    if (end >= 0) return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ZygoteRun;
  }
}

/**
 * Loads what every run needs while nobody waits: the ES module loader for a file, the
 * built-in modules the code banner imports, and the source map support (`--enable-source-maps`
 * parses a module's inline map when it loads). About half of a small run's time otherwise.
 */
async function warmUp(): Promise<void> {
  mkdirSync(RUNNER_DIR, { recursive: true, mode: 0o700 });
  const file = join(RUNNER_DIR, `zygote-module-${process.pid}.mjs`);
  const map = Buffer.from(
    JSON.stringify({ version: 3, sources: ['warm.mts'], mappings: 'AAAA', names: [] }),
  ).toString('base64');
  writeFileSync(
    file,
    "import { createRequire } from 'node:module';\n" +
      "import { fileURLToPath } from 'node:url';\n" +
      "import { dirname } from 'node:path';\n" +
      'export default [createRequire, fileURLToPath, dirname];\n' +
      `//# sourceMappingURL=data:application/json;base64,${map}\n`,
  );
  try {
    await import(pathToFileURL(file).href);
  } finally {
    rmSync(file, { force: true });
  }
}

async function main(): Promise<void> {
  await warmUp().catch(() => undefined); // a run works without it, only slower
  try {
    writeFileSync(warmMarker(process.pid), '');
  } catch {
    // The runner then waits for it no longer than its bound.
  }

  const run = nextRun();
  try {
    rmSync(warmMarker(process.pid), { force: true });
  } catch {
    // The runner removes it when this process ends.
  }
  if (run === undefined) process.exit(0);
  try {
    becomeUser();
  } catch {
    process.stderr.write('sandbox: could not become the sandbox user\n');
    process.exit(CPU_GROUP_EXIT_CODE);
  }
  // From here on the CPU is the session's: its start-up and warm-up were the runner's.
  if (splitsCpu()) {
    try {
      enterCpuGroup();
    } catch {
      process.stderr.write("sandbox: could not enter the session's CPU limit\n");
      process.exit(CPU_GROUP_EXIT_CODE);
    }
  }
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, run.env);
  process.chdir(run.cwd);
  process.argv = [process.argv[0] ?? process.execPath, run.file];
  process.title = `node ${run.file}`;
  await import(pathToFileURL(run.file).href);
}

main().catch((err: unknown) => {
  // As an error thrown by the module itself: reported as Node reports it, exit code 1. Not
  // rethrown: Node would head its report with the line of the rethrow, in this file.
  if (err instanceof Error && err.stack !== undefined) {
    // Without the frame of this file's import, which ran the module: no part of the run's.
    err.stack = err.stack
      .split('\n')
      .filter((line) => !line.includes(__filename))
      .join('\n');
  }
  process.stderr.write(`${inspect(err)}\n\nNode.js ${process.version}\n`);
  process.exit(1);
});
