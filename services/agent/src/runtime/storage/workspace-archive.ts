import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SANDBOX_GID, SANDBOX_UID } from '@sandbox/contract';

/**
 * A workspace as a gzipped tar, made and unpacked as the sandbox user: symlinks are kept (not
 * followed), owners and modes too.
 */

/** tar's error output kept (its end), for the error message. */
const MAX_STDERR_CHARS = 4096;

/**
 * Runs `tar` as the sandbox user (never as root on a sandbox's files), started in `cwd` so
 * that it needs no access to the directories above the workspace, with none of the agent's
 * environment (its tokens). `readAll` adds only CAP_DAC_READ_SEARCH, so that files the
 * sandbox made unreadable (`chmod 000`) are still saved; tar then writes nothing but its
 * output and stays on the workspace's own filesystem.
 */
function tar(
  args: string[],
  stdio: { stdin?: number; stdout?: number },
  cwd?: string,
  readAll = false,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const caps = readAll
      ? ['--inh-caps', '+dac_read_search', '--ambient-caps', '+dac_read_search']
      : [];
    const child = spawn(
      'setpriv',
      [
        '--reuid',
        String(SANDBOX_UID),
        '--regid',
        String(SANDBOX_GID),
        '--clear-groups',
        ...caps,
        'tar',
        ...args,
      ],
      {
        stdio: [stdio.stdin ?? 'ignore', stdio.stdout ?? 'ignore', 'pipe'],
        env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
        ...(cwd ? { cwd } : {}),
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-MAX_STDERR_CHARS);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`tar ${args[0]}: ${stderr.trim()}`)),
    );
  });
}

/** Archives the directory `source` into the (new or truncated) file `archive`, synced. */
export async function packWorkspace(source: string, archive: string): Promise<void> {
  const handle = await open(archive, 'w', 0o600);
  try {
    await tar(
      ['--one-file-system', '--sparse', '-czf', '-', '.'],
      { stdout: handle.fd },
      source,
      true,
    );
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Rejects unless `archive` reads back as a complete gzipped tar. */
export async function checkArchive(archive: string): Promise<void> {
  const handle = await open(archive, 'r');
  try {
    await tar(['-tzf', '-'], { stdin: handle.fd });
  } finally {
    await handle.close();
  }
}

/** Unpacks `archive` into the existing directory `target`. */
export async function unpackWorkspace(archive: string, target: string): Promise<void> {
  const handle = await open(archive, 'r');
  try {
    await tar(['-xzf', '-'], { stdin: handle.fd }, target);
  } finally {
    await handle.close();
  }
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Regular files under `dir`, without following symlinks. */
export async function countFiles(dir: string): Promise<number> {
  let count = 0;
  const queue = [dir];
  while (queue.length > 0) {
    const current = queue.pop() as string;
    for (const entry of await readdir(current, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) queue.push(join(current, entry.name));
      else if (entry.isFile()) count += 1;
    }
  }
  return count;
}
