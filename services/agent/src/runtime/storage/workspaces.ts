import {
  chmod,
  chown,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  stat,
} from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import { statusCode, workspaceVolumeName } from '../docker/docker-names';
import type { SandboxHostIds } from '../docker/host-ids';
import { hostCommands } from '../host-commands';

/** Host commands go through the agent's helper shells: no fork of the agent (host-commands.ts). */
const run = (file: string, args: string[]): Promise<string> => hostCommands.run([file, ...args]);

/** Binds the mount at $1 to $2 as well, then unmounts $1 (lazily if it is busy). */
const MOVE_MOUNT =
  'mount --bind "$1" "$2" || exit 1; umount "$1" 2>/dev/null || umount -l "$1"; exit 0';

/** A new file of `bytes` holes, readable and writable by its owner only. */
async function sparseFile(path: string, bytes: number): Promise<void> {
  const file = await open(path, 'w', 0o600);
  try {
    await file.chmod(0o600); // whatever an older file of that name had
    await file.truncate(bytes);
  } finally {
    await file.close();
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Where each session's /workspace lives on the host. */
export interface WorkspaceStore {
  /** Provisions (or finds) the workspace; returns the Docker bind for /workspace. */
  create(sessionId: string, sizeMb: number, labels: Record<string, string>): Promise<string>;
  /** Removes the workspace and every byte in it (its container must be gone). */
  destroy(sessionId: string): Promise<boolean>;
  /** Where the workspace's files are on the host. */
  hostPath(sessionId: string): Promise<string>;
  /**
   * Makes an existing workspace usable again (e.g. mounts its disk after a reboot); false
   * when the session has none.
   */
  attach(sessionId: string): Promise<boolean>;
}

/** Workspaces a warm pool can make ahead of demand and then hand to a session. */
export interface AdoptableWorkspaces extends WorkspaceStore {
  /**
   * Gives the workspace of `from` (a pool slot) to the session `to`, which must have none: its
   * files and disk move with it, and a container that binds it keeps seeing them.
   */
  adopt(from: string, to: string): Promise<void>;
  /** Every slot (session or pool member) that has a workspace here. */
  slots(): Promise<string[]>;
}

/** Named Docker volumes: no size limit (for hosts where loop devices are not available). */
export class VolumeWorkspaces implements WorkspaceStore {
  constructor(
    private readonly docker: Docker,
    private readonly ids: SandboxHostIds,
  ) {}

  async create(
    sessionId: string,
    _sizeMb: number,
    labels: Record<string, string>,
  ): Promise<string> {
    const name = workspaceVolumeName(sessionId);
    await this.docker.createVolume({ Name: name, Labels: labels });
    // The sandbox user owns its workspace before any container mounts it (a restore unpacks
    // into it as that user first).
    await chown(await this.hostPath(sessionId), this.ids.uid, this.ids.gid);
    return `${name}:/workspace:rw`;
  }

  async hostPath(sessionId: string): Promise<string> {
    const info = await this.docker.getVolume(workspaceVolumeName(sessionId)).inspect();
    return info.Mountpoint;
  }

  async attach(sessionId: string): Promise<boolean> {
    try {
      await this.docker.getVolume(workspaceVolumeName(sessionId)).inspect();
      return true;
    } catch (err) {
      if (statusCode(err) === 404) return false;
      throw err;
    }
  }

  async destroy(sessionId: string): Promise<boolean> {
    try {
      await this.docker.getVolume(workspaceVolumeName(sessionId)).remove({ force: true });
      return true;
    } catch (err) {
      if (statusCode(err) === 404) return false;
      throw err;
    }
  }
}

/**
 * Each workspace is a sparse file holding an ext4 filesystem of the session's disk size,
 * loop-mounted on the host and bound into the container: a full disk is the session's own
 * (ENOSPC → 507 disk_full), never the host's.
 */
export class LoopWorkspaces implements AdoptableWorkspaces {
  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    /** Who owns a disk's root on the host (the sandbox user, shifted by a remapping engine). */
    private readonly ids: SandboxHostIds,
  ) {}

  private paths(sessionId: string): { image: string; mount: string } {
    return {
      image: join(this.dir, `${sessionId}.ext4`),
      mount: join(this.dir, sessionId),
    };
  }

  hostPath(sessionId: string): Promise<string> {
    return Promise.resolve(this.paths(sessionId).mount);
  }

  private async isMounted(path: string): Promise<boolean> {
    const mounts = await readFile('/proc/self/mounts', 'utf8');
    return mounts.split('\n').some((line) => line.split(' ')[1] === path);
  }

  async attach(sessionId: string): Promise<boolean> {
    const { image, mount } = this.paths(sessionId);
    if (!(await exists(image))) return false;
    await chmod(image, 0o600); // made 0644 by agents before this one
    await mkdir(mount, { recursive: true, mode: 0o755 });
    if (!(await this.isMounted(mount))) {
      await run('mount', ['-o', 'loop,nosuid,nodev,noatime', image, mount]);
      this.logger.info({ sessionId }, 'workspace disk mounted again');
    }
    await this.handToUser(sessionId, mount);
    return true;
  }

  /**
   * A disk made while the engine mapped the sandbox user elsewhere (its remapping switched on
   * or off since, ADR 32): what the user owned there is given to the user as the host sees it
   * now. Files of any other owner keep theirs.
   */
  private async handToUser(sessionId: string, mount: string): Promise<void> {
    const root = await stat(mount);
    if (root.uid === this.ids.uid || root.uid === 0) return;
    await run('chown', [
      '-R',
      '-h',
      `--from=${root.uid}:${root.gid}`,
      `${this.ids.uid}:${this.ids.gid}`,
      mount,
    ]);
    this.logger.info(
      { sessionId, from: root.uid, to: this.ids.uid },
      "workspace handed to the sandbox user's new host uid",
    );
  }

  async create(sessionId: string, sizeMb: number): Promise<string> {
    const { image, mount } = this.paths(sessionId);
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      if (!(await exists(image))) {
        // A sparse file, made here rather than by `truncate` and `mv`: each process the agent
        // starts costs a fork of its whole Node, and a pool member is made under load. The
        // whole disk, deleted bytes too, is the agent's alone, even where the directory is
        // searchable by a remapped sandbox root (openToSandboxRoot).
        await sparseFile(`${image}.tmp`, sizeMb * 1024 * 1024);
        await run('mkfs.ext4', [
          '-q',
          '-F',
          '-m',
          '0',
          '-E',
          `root_owner=${this.ids.uid}:${this.ids.gid},lazy_itable_init=1,lazy_journal_init=1`,
          `${image}.tmp`,
        ]);
        await rename(`${image}.tmp`, image);
      }
      await mkdir(mount, { recursive: true, mode: 0o755 });
      if (!(await this.isMounted(mount))) {
        await run('mount', ['-o', 'loop,nosuid,nodev,noatime', image, mount]);
        await rmdir(join(mount, 'lost+found')).catch(() => undefined);
      }
    } catch (err) {
      this.logger.error({ err, sessionId }, 'workspace provisioning failed');
      await this.destroy(sessionId).catch(() => undefined);
      throw new AppError('service_unavailable', 'Could not provision the session disk', {
        cause: err,
        retryAfter: 5,
      });
    }
    // Outside the step above: a disk that holds a session's files is never destroyed for it.
    await this.handToUser(sessionId, mount);
    return `${mount}:/workspace:rw`;
  }

  async adopt(from: string, to: string): Promise<void> {
    const source = this.paths(from);
    const target = this.paths(to);
    if (await exists(target.image)) {
      throw new Error(`${to} has a workspace already`);
    }
    if (!(await this.isMounted(source.mount))) throw new Error(`${from} is not mounted`);
    // The same mounted filesystem at the new path (never a second loop device on one image,
    // which would corrupt it), then the old path goes; bound containers are unaffected.
    await rename(source.image, target.image);
    try {
      await mkdir(target.mount, { recursive: true, mode: 0o755 });
      // One process for both steps (a create waits for it); it fails only if the bind did.
      await run('/bin/sh', ['-c', MOVE_MOUNT, 'move-mount', source.mount, target.mount]);
    } catch (err) {
      await rename(target.image, source.image).catch(() => undefined);
      throw err;
    }
    await rmdir(source.mount).catch(() => undefined);
  }

  async slots(): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const slots = new Set<string>();
    for (const name of names) {
      if (name.startsWith('.')) continue;
      slots.add(name.replace(/\.ext4(\.tmp)?$/, ''));
    }
    return [...slots];
  }

  async destroy(sessionId: string): Promise<boolean> {
    const { image, mount } = this.paths(sessionId);
    let existed = false;
    if (await this.isMounted(mount)) {
      existed = true;
      await run('umount', [mount]).catch(() => run('umount', ['-l', mount]));
    }
    for (const path of [mount, image, `${image}.tmp`]) {
      if (await exists(path)) {
        existed = true;
        // --one-file-system semantics: the mount is gone, so this only removes the empty dir.
        await rm(path, { recursive: true, force: true });
      }
    }
    return existed;
  }
}
