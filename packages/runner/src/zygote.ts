/**
 * A pre-started Node for the next code run. The runner starts it ahead of time; it waits for
 * one run on fd 3 (a JSON line: the code file, working directory, environment and timing
 * file), then becomes that run: the same process, flags and semantics as `node file`, without
 * paying Node's start-up while the caller waits. It serves one run and exits with it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Socket } from 'node:net';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { CPU_GROUP_EXIT_CODE, enterCpuGroup, splitsCpu } from './cpu-group';
import { RUNNER_DIR } from './runner-dir';

interface ZygoteRun {
  file: string;
  cwd: string;
  env: Record<string, string>;
  timingFile: string;
}

/** USER_HZ: the unit of /proc's CPU times on Linux. */
const TICKS_PER_SECOND = 100;

/** CPU time of this process and of the children it waited for, in ticks (as GNU time). */
function cpuTicks(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name; utime, stime, cutime and cstime are fields 14 to 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
}

function peakRssKb(): number {
  const match = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  return match === null ? 0 : Number(match[1]);
}

/** The run, from the runner; undefined when the runner went away first. */
function nextRun(): Promise<ZygoteRun | undefined> {
  return new Promise((resolve) => {
    const control = new Socket({ fd: 3, readable: true, writable: false });
    let text = '';
    control.setEncoding('utf8');
    control.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end < 0) return;
      control.destroy();
      resolve(JSON.parse(text.slice(0, end)) as ZygoteRun);
    });
    control.on('end', () => resolve(undefined));
    control.on('error', () => resolve(undefined));
  });
}

/**
 * Loads what every run needs while nobody waits: the ES module loader for a file, the
 * built-in modules the code banner imports, and the source map support (`--enable-source-maps`
 * parses a module's inline map when it loads). About half of a small run's time otherwise.
 */
async function warmUp(): Promise<void> {
  mkdirSync(RUNNER_DIR, { recursive: true, mode: 0o700 });
  const file = join(RUNNER_DIR, `zygote-warm-${process.pid}.mjs`);
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

  const run = await nextRun();
  if (run === undefined) process.exit(0);
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
  // What the run used, in GNU time's format: only what it used after it was handed over.
  const before = cpuTicks();
  process.on('exit', () => {
    try {
      const seconds = (cpuTicks() - before) / TICKS_PER_SECOND;
      writeFileSync(run.timingFile, `timing 0 ${seconds.toFixed(2)} 0 ${peakRssKb()}\n`);
    } catch {
      // The runner measures from /proc instead.
    }
  });
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
