import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@sandbox/logger';
import { exists, isMounted, run, sparseFile } from './host-files';

/** The store's backing file and its mount point, under the workspace directory (ADR 43). */
export function reflinkStorePaths(workspaceDir: string): { file: string; mount: string } {
  return { file: join(workspaceDir, '.disks.xfs'), mount: join(workspaceDir, '.disks') };
}

/**
 * Mounts (making it the first time) the XFS filesystem with reflinks that holds the session
 * disks' images: a sparse file of `sizeGb` under the workspace directory, on a loop device,
 * with `discard` so that the blocks of deleted images go back to the host. Answers the
 * directory to keep images in, or undefined where XFS cannot be made or mounted here (then
 * images stay on the host's filesystem and a fork copies them whole).
 */
export async function ensureReflinkStore(
  workspaceDir: string,
  sizeGb: number,
  logger: Logger,
): Promise<string | undefined> {
  const { file, mount } = reflinkStorePaths(workspaceDir);
  try {
    if (await isMounted(mount)) return mount;
    if (!(await exists(file))) {
      await sparseFile(`${file}.tmp`, sizeGb * 1024 ** 3);
      await run('mkfs.xfs', ['-q', '-f', '-m', 'reflink=1', `${file}.tmp`]);
      await rename(`${file}.tmp`, file);
    }
    await mkdir(mount, { recursive: true, mode: 0o700 });
    await run('mount', ['-o', 'loop,discard,nosuid,nodev,noexec,noatime', file, mount]);
    logger.info({ mount, sizeGb }, 'copy-on-write disk store mounted');
    return mount;
  } catch (err) {
    await rm(`${file}.tmp`, { force: true }).catch(() => undefined);
    logger.warn(
      { err },
      'no copy-on-write disk store (is xfsprogs installed?): disks stay on the host filesystem, and a fork copies a whole disk',
    );
    return undefined;
  }
}
