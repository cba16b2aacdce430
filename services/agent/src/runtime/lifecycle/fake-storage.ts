import { mkdirSync } from 'node:fs';
import type { SandboxSpec } from '../sandbox-runtime';
import type { ArchiveManifest } from '../storage/blob-store';
import type { Hold } from '../storage/held-archive';
import { AppError } from '@sandbox/errors';
import type { AdoptableWorkspaces, CloneTarget } from '../storage/workspaces';
import type { SavedWorkspaces, SpecStore } from './lifecycle-deps';
import type { Journal } from './test-fixtures';

/* In-memory doubles of the lifecycle's storage: workspaces, saved workspaces, specs. */

export class FakeWorkspaces implements AdoptableWorkspaces {
  /** Sessions with a disk, and whether it attaches (false: lost, e.g. after a reboot). */
  readonly disks = new Map<string, { attaches: boolean }>();

  constructor(private readonly journal: Journal) {}

  create(sessionId: string): Promise<string> {
    this.journal.push(`workspace.create ${sessionId}`);
    if (!this.disks.has(sessionId)) this.disks.set(sessionId, { attaches: true });
    return Promise.resolve(`/disks/${sessionId}:/workspace:rw`);
  }

  destroy(sessionId: string): Promise<boolean> {
    this.journal.push(`workspace.destroy ${sessionId}`);
    return Promise.resolve(this.disks.delete(sessionId));
  }

  hostPath(sessionId: string): Promise<string> {
    return Promise.resolve(`/nonexistent/disks/${sessionId}`);
  }

  attach(sessionId: string): Promise<boolean> {
    return Promise.resolve(this.disks.get(sessionId)?.attaches ?? false);
  }

  adopt(from: string, to: string): Promise<void> {
    this.journal.push(`workspace.adopt ${from} ${to}`);
    const disk = this.disks.get(from);
    if (disk === undefined || this.disks.has(to)) {
      return Promise.reject(new Error(`cannot adopt ${from} as ${to}`));
    }
    this.disks.delete(from);
    this.disks.set(to, disk);
    return Promise.resolve();
  }

  /** Whether `clone` fails (after making the first target's disk, as a real failure could). */
  failClone = false;

  clone(from: string, to: readonly CloneTarget[]): Promise<void> {
    this.journal.push(`workspace.clone ${from} ${to.map((target) => target.sessionId).join(' ')}`);
    if (!this.disks.has(from)) return Promise.reject(new Error(`${from} has no disk`));
    for (const { sessionId } of to) {
      this.disks.set(sessionId, { attaches: true });
      if (this.failClone) {
        this.disks.delete(sessionId);
        return Promise.reject(new Error('clone failed'));
      }
    }
    return Promise.resolve();
  }

  slots(): Promise<string[]> {
    return Promise.resolve([...this.disks.keys()]);
  }
}

export class FakeBlobs implements SavedWorkspaces {
  readonly saved = new Map<string, ArchiveManifest>();

  constructor(private readonly journal: Journal) {}

  manifest(sessionId: string): Promise<ArchiveManifest | undefined> {
    return Promise.resolve(this.saved.get(sessionId));
  }

  save(sessionId: string): Promise<ArchiveManifest> {
    this.journal.push(`blob.save ${sessionId}`);
    const manifest = { sha256: '0'.repeat(64), bytes: 100, filesCount: 3 };
    this.saved.set(sessionId, manifest);
    return Promise.resolve(manifest);
  }

  /** What `bytesInUse` answers. */
  inUse = 100;

  bytesInUse(): Promise<number> {
    return Promise.resolve(this.inUse);
  }

  keepDisk(sessionId: string): Promise<ArchiveManifest> {
    this.journal.push(`blob.keepDisk ${sessionId}`);
    const manifest = { sha256: '', bytes: 100, filesCount: 3, format: 'disk' as const };
    this.saved.set(sessionId, manifest);
    return Promise.resolve(manifest);
  }

  /** When set, restores fail with it (after the journal entry). */
  failRestore: Error | undefined;

  restore(sessionId: string): Promise<ArchiveManifest> {
    this.journal.push(`blob.restore ${sessionId}`);
    if (this.failRestore !== undefined) return Promise.reject(this.failRestore);
    const manifest = this.saved.get(sessionId);
    return manifest === undefined
      ? Promise.reject(new Error('nothing saved'))
      : Promise.resolve(manifest);
  }

  /** Sessions whose manifest is gone but whose archive is not (yet). */
  readonly unnamed = new Set<string>();

  forget(sessionId: string): Promise<void> {
    this.journal.push(`blob.forget ${sessionId}`);
    if (this.saved.delete(sessionId)) this.unnamed.add(sessionId);
    return Promise.resolve();
  }

  remove(sessionId: string): Promise<void> {
    this.journal.push(`blob.remove ${sessionId}`);
    this.saved.delete(sessionId);
    this.unnamed.delete(sessionId);
    return Promise.resolve();
  }

  removeLogs(sessionId: string): Promise<void> {
    this.journal.push(`blob.removeLogs ${sessionId}`);
    this.logs.delete(sessionId);
    return Promise.resolve();
  }

  /** Sessions whose run logs were saved for a move. */
  readonly logs = new Set<string>();

  saveLogs(sessionId: string): Promise<boolean> {
    this.journal.push(`blob.saveLogs ${sessionId}`);
    this.logs.add(sessionId);
    return Promise.resolve(true);
  }

  /** Snapshots stored, by id, with the workspace they were taken from. */
  readonly snapshots = new Map<string, string>();

  async saveSnapshot(snapshotId: string, hold: Hold): Promise<ArchiveManifest> {
    const source = await hold((workspace) => {
      this.journal.push(`blob.saveSnapshot ${snapshotId}`);
      return Promise.resolve(workspace);
    });
    this.snapshots.set(snapshotId, source);
    return { sha256: '0'.repeat(64), bytes: 100, filesCount: 3, format: 'tar' };
  }

  restoreSnapshot(snapshotId: string, target: string): Promise<ArchiveManifest> {
    this.journal.push(`blob.restoreSnapshot ${snapshotId} ${target}`);
    if (!this.snapshots.has(snapshotId)) {
      return Promise.reject(new AppError('snapshot_not_found', 'No such snapshot'));
    }
    return Promise.resolve({ sha256: '0'.repeat(64), bytes: 100, filesCount: 3, format: 'tar' });
  }

  removeSnapshot(snapshotId: string): Promise<void> {
    this.journal.push(`blob.removeSnapshot ${snapshotId}`);
    this.snapshots.delete(snapshotId);
    return Promise.resolve();
  }

  /** Takes the session's saved logs: an empty directory of them at `target`. */
  restoreLogs(sessionId: string, target: string): Promise<boolean> {
    this.journal.push(`blob.restoreLogs ${sessionId}`);
    const had = this.logs.delete(sessionId);
    if (had) mkdirSync(target, { recursive: true });
    return Promise.resolve(had);
  }
}

export class FakeSpecs implements SpecStore {
  readonly specs = new Map<string, SandboxSpec>();

  constructor(private readonly journal: Journal) {}

  write(spec: SandboxSpec): Promise<void> {
    this.journal.push(`spec.write ${spec.sessionId}`);
    this.specs.set(spec.sessionId, spec);
    return Promise.resolve();
  }

  read(sessionId: string): Promise<SandboxSpec | undefined> {
    return Promise.resolve(this.specs.get(sessionId));
  }

  remove(sessionId: string): Promise<void> {
    this.journal.push(`spec.remove ${sessionId}`);
    this.specs.delete(sessionId);
    return Promise.resolve();
  }

  list(): Promise<SandboxSpec[]> {
    return Promise.resolve([...this.specs.values()]);
  }
}
