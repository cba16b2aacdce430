import { open, rm, stat } from 'node:fs/promises';
import type { SandboxHostIds } from '../docker/host-ids';
import {
  checkArchive,
  packArgs,
  sha256Of,
  startTar,
  WORTH_COMPRESSING,
  type ArchiveFormat,
} from './workspace-archive';
import { syncPath, withFile } from './host-files';

/**
 * Runs `pack` with a workspace held still (its sandbox frozen), given the workspace's path on
 * the host; whatever `pack` returns comes back.
 */
export type Hold = <T>(pack: (source: string) => Promise<T>) => Promise<T>;

/** How much of the tar the zstd probe compresses. */
const PROBE_BYTES = 8 * 1024 * 1024;

/** Bytes zstd makes of `input` (as the sandbox user: it only sees a pipe). */
async function zstdBytes(
  ids: SandboxHostIds,
  input: number | 'pipe',
  output: number | 'pipe',
  feed?: (stdin: NodeJS.WritableStream) => Promise<void>,
): Promise<number> {
  const { child, exited } = startTar(
    ids,
    ['-3', '-T1', '-q', '-c'],
    { stdin: input, stdout: output },
    undefined,
    false,
    'zstd',
  );
  let bytes = 0;
  child.stdout?.on('data', (chunk: Buffer) => (bytes += chunk.length));
  if (feed !== undefined && child.stdin !== null) await feed(child.stdin);
  await exited;
  return bytes;
}

/** Whether zstd makes the first PROBE_BYTES of the tar `plain` at least a tenth smaller. */
function worthCompressing(ids: SandboxHostIds, plain: string): Promise<boolean> {
  return withFile(plain, 'r', async (handle) => {
    const sample = Buffer.alloc(PROBE_BYTES);
    const { bytesRead } = await handle.read(sample, 0, PROBE_BYTES, 0);
    if (bytesRead === 0) return false;
    const compressed = await zstdBytes(ids, 'pipe', 'pipe', async (stdin) => {
      await new Promise<void>((resolve, reject) => {
        stdin.on('error', reject);
        stdin.end(sample.subarray(0, bytesRead), () => resolve());
      });
    });
    return compressed <= WORTH_COMPRESSING * bytesRead;
  });
}

/**
 * A snapshot's archive (ADR 44): the plain tar is packed while `hold` keeps the workspace
 * still, and everything else (sync, check, compression) happens after, with the sandbox
 * running again. zstd is kept when a probe of the tar's start and then the whole archive
 * save at least a tenth (ADR 19's rule). The caller removes the staging files of every
 * format, whatever happens.
 */
export async function archiveHeld(
  ids: SandboxHostIds,
  hold: Hold,
  stagingFile: (format: ArchiveFormat) => string,
): Promise<{ file: string; format: ArchiveFormat; source: string; sha256: string }> {
  const plain = stagingFile('tar');
  const handle = await open(plain, 'w', 0o600);
  let source: string;
  try {
    source = await hold(async (workspace) => {
      await startTar(ids, packArgs('tar'), { stdout: handle.fd }, workspace, true).exited;
      return workspace;
    });
    if (!(await worthCompressing(ids, plain))) {
      // Kept as it is: synced, checked and hashed at once (the hash reads the page cache).
      const [, , sha256] = await Promise.all([
        handle.sync(),
        checkArchive(ids, plain, 'tar'),
        sha256Of(plain),
      ]);
      return { file: plain, format: 'tar', source, sha256 };
    }
  } finally {
    await handle.close();
  }
  const tarBytes = await checkArchive(ids, plain, 'tar');
  const compressed = stagingFile('tar.zst');
  const input = await open(plain, 'r');
  const output = await open(compressed, 'w', 0o600);
  try {
    await zstdBytes(ids, input.fd, output.fd);
    await output.sync();
  } finally {
    await Promise.all([input.close(), output.close()]);
  }
  if ((await stat(compressed)).size > WORTH_COMPRESSING * tarBytes) {
    // The probe was wrong about the rest: the plain tar after all.
    await rm(compressed, { force: true });
    await syncPath(plain);
    return { file: plain, format: 'tar', source, sha256: await sha256Of(plain) };
  }
  await rm(plain, { force: true });
  const [, sha256] = await Promise.all([
    checkArchive(ids, compressed, 'tar.zst'),
    sha256Of(compressed),
  ]);
  return { file: compressed, format: 'tar.zst', source, sha256 };
}
