import { chmod, chown, mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type Docker from 'dockerode';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import { statusCode, workspaceVolumeName } from '../docker/docker-names';
import type { SandboxHostIds } from '../docker/host-ids';
import { cloneFrozen, thawLeftFrozen } from './disk-clone';
import { exists, isMounted, run, sparseFile } from './host-files';
import { ensureReflinkStore } from './reflink-store';
import { WORKSPACE_MOUNT_OPTIONS, workspaceMkfsArgs } from './workspace-disk';

/** Binds the mount at $1 to $2 as well, then unmounts $1 (lazily if it is busy). */
const MOVE_MOUNT =
  'mount --bind "$1" "$2" || exit 1; umount "$1" 2>/dev/null || umount -l "$1"; exit 0';

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
  /** Releases what the store keeps for itself while the agent runs (at its stop). */
  close?(): Promise<void>;
  /**
   * Gives each of `to` (sessions with no workspace) a copy of the workspace of `from` as it
   * was at one instant, taken while `from` stays in use (a fork, ADR 43); all or none.
   */
  clone(from: string, to: readonly CloneTarget[]): Promise<void>;
}

/** A session a workspace is cloned for, and the labels of what is made for it. */
export interface CloneTarget {
  sessionId: string;
  labels: Record<string, string>;
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

  /** A plain copy: a volume cannot be frozen, so files written during it may be torn. */
  async clone(from: string, targets: readonly CloneTarget[]): Promise<void> {
    const source = await this.hostPath(from);
    const made: string[] = [];
    try {
      for (const { sessionId, labels } of targets) {
        await this.create(sessionId, 0, labels);
        made.push(sessionId);
        await run('cp', ['-a', `${source}/.`, await this.hostPath(sessionId)]);
      }
    } catch (err) {
      for (const sessionId of made) await this.destroy(sessionId).catch(() => undefined);
      throw new AppError('service_unavailable', 'Could not copy the session workspace', {
        cause: err,
        retryAfter: 5,
      });
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
  /** Where new disks' images go: the copy-on-write store once `prepare` mounted it. */
  private imageDir: string;

  constructor(
    private readonly dir: string,
    private readonly logger: Logger,
    /** Who owns a disk's root on the host (the sandbox user, shifted by a remapping engine). */
    private readonly ids: SandboxHostIds,
  ) {
    this.imageDir = dir;
  }

  /**
   * Thaws disks a crash left frozen mid-fork, then, with `store`, mounts the copy-on-write
   * store (ADR 43) that new images go to. Images made before it stay where they are.
   */
  prepare(store?: { sizeGb: number }): Promise<void> {
    // Once per agent: a thaw while a fork runs would cut its freeze short.
    this.prepared ??= this.prepareOnce(store);
    return this.prepared;
  }

  private prepared: Promise<void> | undefined;

  private async prepareOnce(store?: { sizeGb: number }): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await thawLeftFrozen(this.dir, (slot) => join(this.dir, slot), this.logger);
    if (store === undefined) return;
    this.imageDir = (await ensureReflinkStore(this.dir, store.sizeGb, this.logger)) ?? this.dir;
  }

  /**
   * Unmounts the disk store if nothing uses it any more (no disk of it mounted: a plain
   * `umount` refuses a busy one, which stays for the next start); kept otherwise.
   */
  async close(): Promise<void> {
    if (this.imageDir === this.dir) return;
    const store = this.imageDir;
    await run('umount', [store]).then(
      () => {
        this.imageDir = this.dir;
        this.prepared = undefined;
      },
      () => undefined,
    );
  }

  /** The image of a disk: where it is (an older one beside the mounts), or where it goes. */
  private async paths(sessionId: string): Promise<{ image: string; mount: string }> {
    const mount = join(this.dir, sessionId);
    const legacy = join(this.dir, `${sessionId}.ext4`);
    if (this.imageDir === this.dir || (await exists(legacy))) return { image: legacy, mount };
    return { image: join(this.imageDir, `${sessionId}.ext4`), mount };
  }

  hostPath(sessionId: string): Promise<string> {
    return Promise.resolve(join(this.dir, sessionId));
  }

  private isMounted(path: string): Promise<boolean> {
    return isMounted(path);
  }

  async attach(sessionId: string): Promise<boolean> {
    const { image, mount } = await this.paths(sessionId);
    if (!(await exists(image))) return false;
    await chmod(image, 0o600); // made 0644 by agents before this one
    await mkdir(mount, { recursive: true, mode: 0o755 });
    if (!(await this.isMounted(mount))) {
      await run('mount', ['-o', WORKSPACE_MOUNT_OPTIONS, image, mount]);
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
    const { image, mount } = await this.paths(sessionId);
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      if (!(await exists(image))) {
        // A sparse file, made here rather than by `truncate` and `mv`: each process the agent
        // starts costs a fork of its whole Node, and a pool member is made under load. The
        // whole disk, deleted bytes too, is the agent's alone, even where the directory is
        // searchable by a remapped sandbox root (openToSandboxRoot).
        await sparseFile(`${image}.tmp`, sizeMb * 1024 * 1024);
        await run('mkfs.ext4', workspaceMkfsArgs(`${image}.tmp`, this.ids));
        await rename(`${image}.tmp`, image);
      }
      await mkdir(mount, { recursive: true, mode: 0o755 });
      if (!(await this.isMounted(mount))) {
        await run('mount', ['-o', WORKSPACE_MOUNT_OPTIONS, image, mount]);
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
    const source = await this.paths(from);
    // Beside the source's image: a rename within its filesystem.
    const target = {
      image: join(dirname(source.image), `${to}.ext4`),
      mount: join(this.dir, to),
    };
    if (await this.hasImage(to)) throw new Error(`${to} has a workspace already`);
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

  async clone(from: string, targets: readonly CloneTarget[]): Promise<void> {
    const to = targets.map((target) => target.sessionId);
    const source = await this.paths(from);
    if (!(await this.isMounted(source.mount))) {
      throw new AppError('service_unavailable', 'The session has no disk here to fork now', {
        retryAfter: 1,
      });
    }
    for (const slot of to) {
      if (await this.hasImage(slot)) throw new Error(`${slot} has a workspace already`);
    }
    const images = to.map((slot) => join(this.imageDir, `${slot}.ext4`));
    try {
      const targets = images.map((image) => `${image}.tmp`);
      const frozenMs = await cloneFrozen(this.dir, from, source, targets);
      for (const image of images) await rename(`${image}.tmp`, image);
      this.logger.info({ sessionId: from, forks: to, frozenMs }, 'session disk cloned');
    } catch (err) {
      for (const slot of to) await this.destroy(slot).catch(() => undefined);
      this.logger.error({ err, sessionId: from, forks: to }, 'disk clone failed');
      throw new AppError('service_unavailable', 'Could not copy the session disk', {
        cause: err,
        retryAfter: 5,
      });
    }
  }

  private async hasImage(slot: string): Promise<boolean> {
    for (const dir of new Set([this.dir, this.imageDir])) {
      if (await exists(join(dir, `${slot}.ext4`))) return true;
    }
    return false;
  }

  async slots(): Promise<string[]> {
    const slots = new Set<string>();
    for (const dir of new Set([this.dir, this.imageDir])) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (name.startsWith('.')) continue;
        slots.add(name.replace(/\.ext4(\.tmp)?$/, ''));
      }
    }
    return [...slots];
  }

  async destroy(sessionId: string): Promise<boolean> {
    const mount = join(this.dir, sessionId);
    let existed = false;
    if (await this.isMounted(mount)) {
      existed = true;
      await run('umount', [mount]).catch(() => run('umount', ['-l', mount]));
    }
    const images = [...new Set([this.dir, this.imageDir])].map((dir) =>
      join(dir, `${sessionId}.ext4`),
    );
    for (const path of [mount, ...images.flatMap((image) => [image, `${image}.tmp`])]) {
      if (await exists(path)) {
        existed = true;
        // --one-file-system semantics: the mount is gone, so this only removes the empty dir.
        await rm(path, { recursive: true, force: true });
      }
    }
    return existed;
  }
}
