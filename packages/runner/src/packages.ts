import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { spawner } from './exec';
import { RunnerError } from './protocol';

const TAR = ['/bin/tar', '-xzf', '-', '--no-same-owner', '--no-same-permissions'];

/** stderr of `stream`, whole, once it ends. */
function collected(stream: Readable): Promise<string> {
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return new Promise((resolve) => stream.once('end', () => resolve(text)));
}

/** Why tar failed, from its exit code and stderr; undefined when it did not. */
function failure(code: number | null, stderr: string): Error | undefined {
  if (code === 0) return undefined;
  if (/no space left|quota exceeded/i.test(stderr)) {
    return Object.assign(new Error(stderr.trim()), { code: 'ENOSPC' });
  }
  return new RunnerError('internal_error', `Unpacking packages failed: ${stderr.trim()}`);
}

/**
 * Unpacks a bundle of installed packages (a gzipped tar of `node_modules/…`, made by the
 * agent's installer) into `cwd`, as the sandbox user: tar is started by the spawner, as runs
 * are, which makes it that user in full (an exec of the runner's own would keep its root real
 * uid, and gVisor's would make it the effective one too). Without the spawner (the runner's
 * tests), as the runner's own child.
 */
export async function extractBundle(cwd: string, bundle: Buffer): Promise<void> {
  if (!spawner.available) return extractAsChild(cwd, bundle);
  const run = await spawner.spawn(TAR, {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    enterCpuGroup: false,
    stdin: true,
  });
  run.stdout.resume();
  const stderr = collected(run.stderr);
  await run.input?.write(bundle);
  await run.input?.end();
  const { code } = await run.exited;
  const failed = failure(code, await stderr);
  if (failed !== undefined) throw failed;
}

function extractAsChild(cwd: string, bundle: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const [file = 'tar', ...args] = TAR;
    const tar = spawn(file, args, { cwd, stdio: ['pipe', 'ignore', 'pipe'] });
    const stderr = collected(tar.stderr);
    tar.on('error', reject);
    tar.on('close', (code) => {
      void stderr.then((text) => {
        const failed = failure(code, text);
        if (failed === undefined) resolve();
        else reject(failed);
      });
    });
    tar.stdin.end(bundle);
  });
}
