import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { AgentConfig } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import { LocalObjectStore } from './local-object-store';
import type { ObjectStore } from './object-store';
import { S3ObjectStore, type S3Credentials } from './s3-object-store';
import {
  checkArchive,
  countFiles,
  packWorkspace,
  sha256Of,
  unpackWorkspace,
} from './workspace-archive';
import { isSessionId } from '@sandbox/contract';

export interface ArchiveManifest {
  sha256: string;
  bytes: number;
  filesCount: number;
}

function keysOf(sessionId: string): { archive: string; manifest: string } {
  if (!isSessionId(sessionId)) throw new AppError('invalid_request', 'Invalid session id');
  return { archive: `${sessionId}.tar.gz`, manifest: `${sessionId}.json` };
}

function parseManifest(text: string): ArchiveManifest {
  const unreadable = (cause?: unknown) =>
    new AppError('internal_error', 'The saved workspace has an unreadable manifest', { cause });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw unreadable(err);
  }
  const { sha256, bytes, filesCount } = (value ?? {}) as Record<string, unknown>;
  if (
    typeof sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(sha256) ||
    typeof bytes !== 'number' ||
    !Number.isSafeInteger(bytes) ||
    typeof filesCount !== 'number' ||
    !Number.isSafeInteger(filesCount)
  ) {
    throw unreadable();
  }
  return { sha256, bytes, filesCount };
}

/** Reads `body` to its end, into the new file `file` if given: the bytes' sha256 and count. */
async function digest(body: Readable, file?: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const sink =
    file === undefined
      ? new Writable({ write: (_chunk, _encoding, done) => done() })
      : createWriteStream(file, { mode: 0o600 });
  await pipeline(body, count, sink);
  return { sha256: hash.digest('hex'), bytes };
}

/**
 * Workspaces of deep-sleeping sessions: one gzipped tar per session and a manifest with its
 * sha256, in an object store. An archive is made in a local staging file, checked, stored, and
 * read back from the store; the manifest is written last, so a manifest always names a
 * complete, verified archive. A restore checks the sha256 of the bytes it unpacks.
 */
export class BlobStore {
  constructor(
    private readonly objects: ObjectStore,
    /** A local directory of the agent's own for archives on their way in or out. */
    private readonly stagingDir: string,
  ) {}

  /** The staging file of one step of a session (a session's steps never overlap). */
  private async staged(sessionId: string, step: 'save' | 'restore'): Promise<string> {
    await mkdir(this.stagingDir, { recursive: true, mode: 0o700 });
    return join(this.stagingDir, `${sessionId}.${step}.tar.gz`);
  }

  async manifest(sessionId: string): Promise<ArchiveManifest | undefined> {
    const text = await this.objects.getText(keysOf(sessionId).manifest);
    return text === undefined ? undefined : parseManifest(text);
  }

  /** Archives `source` (a workspace on the host) and verifies what was stored. */
  async save(sessionId: string, source: string): Promise<ArchiveManifest> {
    const { archive, manifest } = keysOf(sessionId);
    const staged = await this.staged(sessionId, 'save');
    try {
      try {
        await packWorkspace(source, staged);
        await checkArchive(staged);
      } catch (err) {
        throw new AppError('internal_error', 'The workspace could not be archived', {
          cause: err,
        });
      }
      const result: ArchiveManifest = {
        sha256: await sha256Of(staged),
        bytes: (await lstat(staged)).size,
        filesCount: await countFiles(source),
      };
      // An earlier save's manifest goes first: no manifest may name an archive being replaced.
      await this.objects.delete(manifest);
      await this.objects.put(archive, staged);
      await this.verifyStored(archive, result);
      await this.objects.putText(manifest, JSON.stringify(result));
      return result;
    } finally {
      await rm(staged, { force: true });
    }
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

  /** Unpacks a saved workspace into `target` after checking its sha256. */
  async restore(sessionId: string, target: string): Promise<ArchiveManifest> {
    const { archive } = keysOf(sessionId);
    const expected = await this.manifest(sessionId);
    if (expected === undefined) {
      throw new AppError('service_unavailable', 'No saved workspace for this session', {
        retryAfter: 5,
      });
    }
    const staged = await this.staged(sessionId, 'restore');
    try {
      const stored = await this.objects.read(archive);
      if (stored === undefined) {
        throw new AppError('internal_error', 'The saved workspace is missing from the blob store');
      }
      let got: { sha256: string; bytes: number };
      try {
        got = await digest(stored.body, staged);
      } catch (err) {
        throw new AppError('service_unavailable', 'The saved workspace could not be read', {
          cause: err,
          retryAfter: 5,
        });
      }
      if (got.sha256 !== expected.sha256 || got.bytes !== expected.bytes) {
        throw new AppError('internal_error', 'The saved workspace is corrupt');
      }
      await unpackWorkspace(staged, target);
      return expected;
    } finally {
      await rm(staged, { force: true });
    }
  }

  /** Deletes a saved workspace: the manifest first, so that none names a missing archive. */
  async remove(sessionId: string): Promise<void> {
    const { archive, manifest } = keysOf(sessionId);
    await this.objects.delete(manifest);
    await this.objects.delete(archive);
    await rm(join(this.stagingDir, `${sessionId}.save.tar.gz`), { force: true });
    await rm(join(this.stagingDir, `${sessionId}.restore.tar.gz`), { force: true });
  }
}

/**
 * The blob store of the agent's configuration: a local directory, or an S3 bucket staged
 * through `BLOB_STORE_DIR`. `credentials` default to the AWS SDK's chain.
 */
export function createBlobStore(
  config: Pick<AgentConfig, 'blobStore' | 'blobStoreDir'>,
  credentials?: S3Credentials,
): BlobStore {
  const objects =
    config.blobStore.kind === 's3'
      ? new S3ObjectStore(config.blobStore, credentials)
      : new LocalObjectStore(config.blobStoreDir);
  return new BlobStore(objects, join(config.blobStoreDir, '.staging'));
}
