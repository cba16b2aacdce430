import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@sandbox/logger';
import { run } from './host-files';

/**
 * Writes back the filesystem mounted at $1 and its image $2 (while its writers go on, so that
 * the freeze has little left to write), freezes it (writes to it wait; nothing is lost),
 * copies its image to each further argument, thaws it, and prints how long it was frozen
 * (ms). On the reflink store each copy is a clone that shares every block (`cp
 * --reflink=auto`: FICLONE); elsewhere a whole copy. One process for all of it, so that the
 * source stays frozen for the copies only; a signal thaws it too.
 */
const CLONE_FROZEN = [
  'm=$1 src=$2; shift 2',
  'sync -f "$m"; sync "$src"',
  `trap 'fsfreeze -u "$m"; exit 1' HUP INT TERM`,
  't0=$(date +%s%N)',
  'fsfreeze -f "$m" || exit 1',
  'rc=0',
  'for dst; do cp --reflink=auto --preserve=mode "$src" "$dst" || { rc=1; break; }; done',
  'fsfreeze -u "$m" || rc=2',
  'echo $((($(date +%s%N) - t0) / 1000000))',
  'exit $rc',
].join('; ');

/** The marker that says a disk may be frozen: a crash mid-clone leaves it (thawed at start). */
function markerOf(dir: string, slot: string): string {
  return join(dir, `.frozen-${slot}`);
}

/**
 * A consistent copy of a mounted disk's image to each of `targets` (paths, made here), taken
 * while the disk is frozen: every write before it is in the copies, none after. Answers how
 * long the disk was frozen (ms, as the host command saw it).
 */
export async function cloneFrozen(
  markerDir: string,
  slot: string,
  disk: { image: string; mount: string },
  targets: readonly string[],
): Promise<number> {
  const marker = markerOf(markerDir, slot);
  await writeFile(marker, disk.mount, { mode: 0o600 });
  try {
    const output = await run('/bin/sh', [
      '-c',
      CLONE_FROZEN,
      'clone-frozen',
      disk.mount,
      disk.image,
      ...targets,
    ]);
    return Number(output.trim());
  } finally {
    await rm(marker, { force: true });
  }
}

/** Thaws the disks a crash left frozen mid-clone (their markers say which). */
export async function thawLeftFrozen(
  markerDir: string,
  mountOf: (slot: string) => string,
  logger: Logger,
): Promise<void> {
  const names = await readdir(markerDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith('.frozen-')) continue;
    const slot = name.slice('.frozen-'.length);
    // Fails when it is not frozen (the clone ended after all): nothing to do then.
    await run('fsfreeze', ['-u', mountOf(slot)]).then(
      () => logger.warn({ slot }, 'a disk left frozen by a fork was thawed'),
      () => undefined,
    );
    await rm(join(markerDir, name), { force: true });
  }
}
