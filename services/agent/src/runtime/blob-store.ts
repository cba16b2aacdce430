import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '@sandbox/errors';

const SANDBOX_UID = '1000';

export interface ArchiveManifest {
  sha256: string;
  bytes: number;
  filesCount: number;
}

/**
 * Runs `tar` as the sandbox user (never as root on a sandbox's files), started in `cwd` so
 * that it needs no access to the directories above the workspace.
 */
function tar(
  args: string[],
  stdio: { stdin?: number; stdout?: number },
  cwd?: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'setpriv',
      ['--reuid', SANDBOX_UID, '--regid', SANDBOX_UID, '--clear-groups', 'tar', ...args],
      {
        stdio: [stdio.stdin ?? 'ignore', stdio.stdout ?? 'ignore', 'pipe'],
        ...(cwd ? { cwd } : {}),
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`tar ${args[0]}: ${stderr.trim()}`)),
    );
  });
}

async function sha256Of(path: string): Promise<string> {
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

/**
 * Workspaces of deep-sleeping sessions in a local directory: one gzipped tar per session and
 * a manifest with its sha256, written only after the archive is complete, synced and
 * verified. A restore checks the sha256 before unpacking.
 */
export class LocalBlobStore {
  constructor(private readonly dir: string) {}

  private paths(sessionId: string): { archive: string; manifest: string } {
    return {
      archive: join(this.dir, `${sessionId}.tar.gz`),
      manifest: join(this.dir, `${sessionId}.json`),
    };
  }

  async manifest(sessionId: string): Promise<ArchiveManifest | undefined> {
    const text = await readFile(this.paths(sessionId).manifest, 'utf8').catch(() => undefined);
    return text === undefined ? undefined : (JSON.parse(text) as ArchiveManifest);
  }

  /** Archives `source` (a workspace on the host) and verifies what was written. */
  async save(sessionId: string, source: string): Promise<ArchiveManifest> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const { archive, manifest } = this.paths(sessionId);
    const temp = `${archive}.tmp`;
    const handle = await open(temp, 'w', 0o600);
    try {
      await tar(['-czf', '-', '.'], { stdout: handle.fd }, source);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const sha256 = await sha256Of(temp);
    const bytes = (await lstat(temp)).size;
    const check = await open(temp, 'r');
    try {
      await tar(['-tzf', '-'], { stdin: check.fd });
    } catch (err) {
      throw new AppError('internal_error', 'The saved workspace does not read back', {
        cause: err,
      });
    } finally {
      await check.close();
    }
    await rename(temp, archive);
    const result: ArchiveManifest = { sha256, bytes, filesCount: await countFiles(source) };
    await writeFile(`${manifest}.tmp`, JSON.stringify(result), { mode: 0o600 });
    await rename(`${manifest}.tmp`, manifest);
    if ((await sha256Of(archive)) !== sha256) {
      throw new AppError('internal_error', 'The saved workspace changed on disk');
    }
    return result;
  }

  /** Unpacks a saved workspace into `target` after checking its sha256. */
  async restore(sessionId: string, target: string): Promise<ArchiveManifest> {
    const { archive } = this.paths(sessionId);
    const expected = await this.manifest(sessionId);
    if (expected === undefined) {
      throw new AppError('service_unavailable', 'No saved workspace for this session', {
        retryAfter: 5,
      });
    }
    if ((await sha256Of(archive)) !== expected.sha256) {
      throw new AppError('internal_error', 'The saved workspace is corrupt');
    }
    const handle = await open(archive, 'r');
    try {
      await tar(['-xzf', '-'], { stdin: handle.fd }, target);
    } finally {
      await handle.close();
    }
    return expected;
  }

  async remove(sessionId: string): Promise<void> {
    const { archive, manifest } = this.paths(sessionId);
    await rm(manifest, { force: true });
    await rm(archive, { force: true });
    await rm(`${archive}.tmp`, { force: true });
  }
}
