import { chown, copyFile, lstat, mkdir, mkdtemp, readdir, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentConfig } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import {
  digest,
  formatOf,
  parseManifest,
  unpackFailed,
  type ArchiveManifest,
} from './archive-manifest';
import { LocalObjectStore } from './local-object-store';
import type { ObjectStore } from './object-store';
export type { ArchiveManifest } from './archive-manifest';
import { S3ObjectStore, type S3Credentials } from './s3-object-store';
import {
  ARCHIVE_FORMATS,
  archiveWorkspace,
  countFiles,
  sha256Of,
  startUnpack,
  type ArchiveFormat,
  type Unpacking,
} from './workspace-archive';
import { isSessionId, isSnapshotId } from '@sandbox/contract';
import { archiveHeld, type Hold } from './held-archive';
import { SandboxHostIds } from '../docker/host-ids';
import { LOG_FILE } from '../processes/log-files';

/** What a session keeps in the store: its workspace, and its runs' logs (a session moving). */
type Saved = string & { readonly saved: unique symbol };

function checkedSessionId(sessionId: string): Saved {
  if (!isSessionId(sessionId)) throw new AppError('invalid_request', 'Invalid session id');
  return sessionId as Saved;
}

/** A snapshot keeps a workspace under its own id (ADR 44). */
function checkedSnapshotId(snapshotId: string): Saved {
  if (!isSnapshotId(snapshotId)) throw new AppError('invalid_request', 'Invalid snapshot id');
  return snapshotId as Saved;
}

/** The files of a run's log: its meta (`proc_<id>.json`) and output segments (`.<n>.log`). */

const logsOf = (sessionId: string): Saved => `${checkedSessionId(sessionId)}.logs` as Saved;

const manifestKey = (name: Saved) => `${name}.json`;
const archiveKey = (name: Saved, format: ArchiveFormat) => `${name}.${format}`;

/**
 * Workspaces of deep-sleeping sessions: one compressed tar per session and a manifest with its
 * sha256 and format, in an object store. An archive is made in a local staging file, checked,
 * stored, and read back from the store; the manifest is written last, so a manifest always
 * names a complete, verified archive. A restore unpacks the archive as it streams from the
 * store into a target nothing else sees, and fails unless the sha256 of every byte matched.
 */
export class BlobStore {
  constructor(
    private readonly objects: ObjectStore,
    /** A local directory of the agent's own for archives on their way in. */
    private readonly stagingDir: string,
    /** Whom archives are made and unpacked as, on the host. */
    private readonly ids: SandboxHostIds,
  ) {}

  /** A staging file of a session's save (a session's steps never overlap). */
  private stagingFile(name: Saved, format: ArchiveFormat): string {
    return join(this.stagingDir, `${name}.save.${format}`);
  }

  private async removeStagingFiles(name: Saved): Promise<void> {
    for (const format of ARCHIVE_FORMATS) {
      await rm(this.stagingFile(name, format), { force: true });
    }
  }

  async manifest(sessionId: string): Promise<ArchiveManifest | undefined> {
    return this.manifestOf(checkedSessionId(sessionId));
  }

  private async manifestOf(name: Saved): Promise<ArchiveManifest | undefined> {
    const text = await this.objects.getText(manifestKey(name));
    return text === undefined ? undefined : parseManifest(text);
  }

  /** Archives `source` (a workspace on the host) and verifies what was stored. */
  save(sessionId: string, source: string): Promise<ArchiveManifest> {
    return this.saveArchive(checkedSessionId(sessionId), source);
  }

  /**
   * Archives a session's run logs (`dir`) beside its workspace, for the node it moves to
   * (`restoreLogs`); false when it has none.
   */
  async saveLogs(sessionId: string, dir: string): Promise<boolean> {
    const exists = await lstat(dir).then(
      (stats) => stats.isDirectory(),
      () => false,
    );
    if (!exists) return false;
    await this.saveArchive(logsOf(sessionId), dir);
    return true;
  }

  /**
   * Unpacks a moved session's run logs into `target` (which must not exist yet) and removes
   * them from the store; false when there are none.
   */
  async restoreLogs(sessionId: string, target: string): Promise<boolean> {
    const name = logsOf(sessionId);
    if ((await this.manifestOf(name)) === undefined) return false;
    // Unpacked as the sandbox user (as every archive from the store) into a scratch directory
    // of its own, then only the plain files of a log's names are copied into `target`.
    const scratch = await mkdtemp(join(tmpdir(), 'sandbox-logs-'));
    try {
      await chown(scratch, this.ids.uid, this.ids.gid);
      await this.restoreArchive(name, scratch);
      await mkdir(target, { recursive: true, mode: 0o700 });
      for (const entry of await readdir(scratch, { withFileTypes: true })) {
        if (entry.isFile() && LOG_FILE.test(entry.name)) {
          const copy = join(target, entry.name);
          await copyFile(join(scratch, entry.name), copy);
          // libuv's copy keeps the source's owner (the sandbox user) where it can from Node 24
          // on (s3-blob-store.test saw it): the agent owns what it restores.
          await chown(copy, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
        }
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    await this.removeSaved(name);
    return true;
  }

  private async saveArchive(name: Saved, source: string): Promise<ArchiveManifest> {
    await mkdir(this.stagingDir, { recursive: true, mode: 0o700 });
    try {
      let staged: { file: string; format: ArchiveFormat };
      try {
        staged = await archiveWorkspace(this.ids, source, (format) =>
          this.stagingFile(name, format),
        );
      } catch (err) {
        throw new AppError('internal_error', 'The workspace could not be archived', {
          cause: err,
        });
      }
      return await this.store(name, staged, await countFiles(source));
    } finally {
      await this.removeStagingFiles(name);
    }
  }

  /**
   * Stores a staged archive, reads it back, then writes its manifest (the commit point). With
   * `adopt`, a local store takes the staged file itself (a rename: the bytes hashed are the
   * stored ones, so nothing is read back); other stores copy it as ever.
   */
  private async store(
    name: Saved,
    staged: { file: string; format: ArchiveFormat; sha256?: string },
    filesCount: number,
    adopt = false,
  ): Promise<ArchiveManifest> {
    const manifest = manifestKey(name);
    const result: ArchiveManifest = {
      sha256: staged.sha256 ?? (await sha256Of(staged.file)),
      bytes: (await lstat(staged.file)).size,
      filesCount,
      format: staged.format,
    };
    const archive = archiveKey(name, staged.format);
    // An earlier save's manifest goes first: no manifest may name an archive being replaced.
    await this.objects.delete(manifest);
    if (adopt && this.objects.adopt !== undefined) {
      await this.objects.adopt(archive, staged.file);
    } else {
      await this.objects.put(archive, staged.file);
      await this.verifyStored(archive, result);
    }
    await this.objects.putText(manifest, JSON.stringify(result));
    await this.deleteArchives(name, staged.format);
    return result;
  }

  /** A snapshot's manifest (ADR 44); undefined when there is none. */
  snapshotManifest(snapshotId: string): Promise<ArchiveManifest | undefined> {
    return this.manifestOf(checkedSnapshotId(snapshotId));
  }

  /**
   * Stores snapshot `snapshotId` of the workspace `hold` gives: packed while held (its sandbox
   * frozen), then stored and verified like a deep sleep's archive. A failed snapshot leaves
   * nothing in the store.
   */
  async saveSnapshot(snapshotId: string, hold: Hold): Promise<ArchiveManifest> {
    const name = checkedSnapshotId(snapshotId);
    await mkdir(this.stagingDir, { recursive: true, mode: 0o700 });
    try {
      let staged: { file: string; format: ArchiveFormat; source: string; sha256: string };
      try {
        staged = await archiveHeld(this.ids, hold, (format) => this.stagingFile(name, format));
      } catch (err) {
        if (err instanceof AppError) throw err;
        throw new AppError('internal_error', 'The workspace could not be archived', {
          cause: err,
        });
      }
      return await this.store(name, staged, await countFiles(staged.source), true);
    } catch (err) {
      await this.removeSaved(name).catch(() => undefined);
      throw err;
    } finally {
      await this.removeStagingFiles(name);
    }
  }

  /** Unpacks snapshot `snapshotId` into `target`, as `restore` does; the snapshot stays. */
  restoreSnapshot(snapshotId: string, target: string): Promise<ArchiveManifest> {
    return this.restoreArchive(checkedSnapshotId(snapshotId), target, 'snapshot_not_found');
  }

  /** Deletes a snapshot: its manifest, then its archive. */
  removeSnapshot(snapshotId: string): Promise<void> {
    return this.removeSaved(checkedSnapshotId(snapshotId));
  }

  /** Bytes in use on the filesystem of `source`. */
  async bytesInUse(source: string): Promise<number> {
    const usage = await statfs(source);
    return (usage.blocks - usage.bfree) * usage.bsize;
  }

  /**
   * Deep sleep that keeps the session's disk (`source`'s filesystem) on the node: only a
   * manifest saying so, with what the disk holds; older archives of the session go.
   */
  async keepDisk(id: string, source: string): Promise<ArchiveManifest> {
    const sessionId = checkedSessionId(id);
    const manifest = manifestKey(sessionId);
    const result: ArchiveManifest = {
      sha256: '',
      bytes: await this.bytesInUse(source),
      filesCount: await countFiles(source),
      format: 'disk',
    };
    await this.objects.delete(manifest);
    await this.deleteArchives(sessionId);
    await this.objects.putText(manifest, JSON.stringify(result));
    return result;
  }

  /** Rejects unless the object `archive` has exactly the bytes described by `expected`. */
  private async verifyStored(archive: string, expected: ArchiveManifest): Promise<void> {
    const stored = await this.objects.read(archive);
    const fault = 'The saved workspace does not read back from the blob store';
    if (stored === undefined) throw new AppError('internal_error', fault);
    if (stored.size !== expected.bytes) {
      stored.body.destroy();
      throw new AppError('internal_error', fault);
    }
    let back: { sha256: string; bytes: number };
    try {
      back = await digest(stored.body);
    } catch (err) {
      throw new AppError('internal_error', fault, { cause: err });
    }
    if (back.sha256 !== expected.sha256 || back.bytes !== expected.bytes) {
      throw new AppError('internal_error', fault);
    }
  }

  /**
   * Unpacks a saved workspace into `target` (a directory without any of its names, such as a
   * new disk) as it streams from the store. The files reach a scratch directory in `target`
   * first and are moved into place only once the sha256 of the whole archive matched its
   * manifest and tar unpacked all of it; on any failure `target` is left as it was.
   */
  restore(sessionId: string, target: string): Promise<ArchiveManifest> {
    return this.restoreArchive(checkedSessionId(sessionId), target);
  }

  private async restoreArchive(
    name: Saved,
    target: string,
    missing?: 'snapshot_not_found',
  ): Promise<ArchiveManifest> {
    const expected = await this.manifestOf(name);
    if (expected === undefined && missing !== undefined) {
      throw new AppError(missing, 'No such snapshot in the blob store');
    }
    if (expected === undefined) {
      throw new AppError('service_unavailable', 'No saved workspace for this session', {
        retryAfter: 5,
      });
    }
    const format = formatOf(expected);
    const stored = await this.objects.read(archiveKey(name, format));
    if (stored === undefined) {
      throw new AppError('internal_error', 'The saved workspace is missing from the blob store');
    }
    const corrupt = () => new AppError('internal_error', 'The saved workspace is corrupt');
    if (stored.size !== expected.bytes) {
      stored.body.destroy();
      throw corrupt();
    }
    let unpacking: Unpacking;
    try {
      unpacking = await startUnpack(this.ids, target, format, stored.fd);
    } catch (err) {
      stored.body.destroy();
      throw unpackFailed(err);
    }
    try {
      let got: { sha256: string; bytes: number };
      try {
        got = await digest(stored.body, unpacking.input);
      } catch (err) {
        throw new AppError('service_unavailable', 'The saved workspace could not be read', {
          cause: err,
          retryAfter: 5,
        });
      }
      const unpacked = await unpacking.unpacked.then(
        () => undefined,
        (err: unknown) => ({ err }),
      );
      // Bytes that fail the check make tar fail, or unpack something else: corrupt either way.
      if (got.sha256 !== expected.sha256 || got.bytes !== expected.bytes) throw corrupt();
      if (unpacked !== undefined) throw unpackFailed(unpacked.err);
      await unpacking.place().catch((err: unknown) => {
        throw unpackFailed(err);
      });
      return expected;
    } catch (err) {
      await unpacking.discard().catch(() => undefined);
      throw err;
    }
  }

  /** Deletes the archives of every format but `keep`. */
  private async deleteArchives(name: Saved, keep?: ArchiveFormat): Promise<void> {
    for (const format of ARCHIVE_FORMATS) {
      if (format !== keep) await this.objects.delete(archiveKey(name, format));
    }
  }

  /**
   * Deletes the manifest only: the session has no saved workspace from then on, and its
   * archive is garbage for `remove` (or the session's next save) to delete.
   */
  async forget(sessionId: string): Promise<void> {
    await this.objects.delete(manifestKey(checkedSessionId(sessionId)));
  }

  /** Deletes a saved workspace: the manifest first, so that none names a missing archive. */
  async remove(sessionId: string): Promise<void> {
    const name = checkedSessionId(sessionId);
    await this.removeSaved(name);
    // A restore's staging file, of agents before zstd.
    await rm(join(this.stagingDir, `${name}.restore.tar.gz`), { force: true });
  }

  /** Deletes run logs saved for a move (the session is gone). */
  async removeLogs(sessionId: string): Promise<void> {
    await this.removeSaved(logsOf(sessionId));
  }

  private async removeSaved(name: Saved): Promise<void> {
    await this.objects.delete(manifestKey(name));
    await this.deleteArchives(name);
    // Staging files an agent killed mid-step left.
    await this.removeStagingFiles(name);
  }
}

/**
 * The blob store of the agent's configuration: a local directory, or an S3 bucket staged
 * through `BLOB_STORE_DIR`. `credentials` default to the AWS SDK's chain.
 */
export function createBlobStore(
  config: Pick<AgentConfig, 'blobStore' | 'blobStoreDir'>,
  credentials?: S3Credentials,
  ids = new SandboxHostIds(),
): BlobStore {
  const objects =
    config.blobStore.kind === 's3'
      ? new S3ObjectStore(config.blobStore, credentials)
      : new LocalObjectStore(config.blobStoreDir);
  return new BlobStore(objects, join(config.blobStoreDir, '.staging'), ids);
}
