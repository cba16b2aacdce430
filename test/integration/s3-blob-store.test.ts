import { randomBytes } from 'node:crypto';
import { mkdtemp, lstat, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ListBucketsCommand } from '@aws-sdk/client-s3';
import { createBlobStore, type BlobStore } from '@sandbox/agent';
import { loadAgentConfig } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import {
  BUCKET,
  bucketKeys,
  CREDENTIALS,
  filesUnder,
  fingerprint,
  fingerprintAll,
  GZIP_MAGIC,
  isPlainTar,
  localBackend,
  makeWorkspace,
  newSessionId,
  newTarget,
  oldFormatArchive,
  s3Backend,
  s3Client,
  sha256,
  startS3rver,
  useS3rver,
  ZSTD_MAGIC,
  useBackend,
} from '../support/blob-store-fixtures';

/**
 * The blob store of deep-sleeping workspaces, in a local directory and in a real S3 protocol
 * server (s3rver, in-process, over HTTP): every byte, mode and link comes back, archives are
 * zstd and the gzip ones of earlier agents still restore, a corrupt archive is refused before
 * the target changes, and a failed save leaves neither a manifest nor a staging file. No
 * Docker needed; tar runs as uid 1000 like on a node, so this runs as root.
 */

const env = useS3rver();

const BACKENDS = [
  ['local directory', localBackend],
  ['S3', s3Backend],
] as const;

describe.each(BACKENDS)('the blob store in a %s: saving and restoring', (_name, makeBackend) => {
  const s = useBackend(env, makeBackend);

  it('saves a workspace as zstd, commits it with a manifest and restores every byte', async () => {
    const sessionId = newSessionId();
    const archive = s.backend.objectName(`${sessionId}.tar.zst`);
    const manifest = s.backend.objectName(`${sessionId}.json`);
    expect(await s.backend.store.manifest(sessionId)).toBeUndefined();

    const saved = await s.backend.store.save(sessionId, s.compressible);

    const stored = await s.backend.readObject(archive);
    expect(stored.subarray(0, 4)).toEqual(ZSTD_MAGIC);
    expect(stored.length).toBeLessThan(4 * 1024 * 1024);
    expect(saved).toEqual({
      sha256: sha256(stored),
      bytes: stored.length,
      filesCount: s.filesCount,
      format: 'tar.zst',
    });
    expect(await s.backend.store.manifest(sessionId)).toEqual(saved);
    expect(JSON.parse((await s.backend.readObject(manifest)).toString('utf8'))).toEqual(saved);
    expect(await s.backend.objectsOf(sessionId)).toEqual([archive, manifest].sort());

    const target = await newTarget(env.root);
    expect(await s.backend.store.restore(sessionId, target)).toEqual(saved);
    expect(await fingerprintAll(target)).toEqual(await fingerprintAll(s.compressible));
    expect((await lstat(join(target, 'link-to-big'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(target, 'link-to-big'))).toBe('a/big.bin');
    expect(await readlink(join(target, 'dangling'))).toBe('does/not/exist');
    expect(await readlink(join(target, 'host-etc'))).toBe('/etc');
    expect((await lstat(join(target, 'empty.txt'))).size).toBe(0);
    expect((await lstat(join(target, 'shared-dir'))).mode & 0o7777).toBe(0o777);
  });

  it('saves a workspace that zstd would not shrink as a plain tar, and restores it', async () => {
    const sessionId = newSessionId();

    const saved = await s.backend.store.save(sessionId, s.workspace);

    expect(saved.format).toBe('tar');
    const stored = await s.backend.readObject(s.backend.objectName(`${sessionId}.tar`));
    expect(isPlainTar(stored)).toBe(true);
    expect(saved).toEqual({
      sha256: sha256(stored),
      bytes: stored.length,
      filesCount: s.filesCount,
      format: 'tar',
    });
    const target = await newTarget(env.root);
    expect(await s.backend.store.restore(sessionId, target)).toEqual(saved);
    expect(await fingerprintAll(target)).toEqual(await fingerprintAll(s.workspace));
    await s.backend.store.remove(sessionId);
  });
});

describe.each(BACKENDS)(
  'the blob store in a %s: archives of older agents, and corrupt ones',
  (_name, makeBackend) => {
    const s = useBackend(env, makeBackend);

    it('restores a gzip archive of an agent before zstd, whose manifest names no format', async () => {
      const sessionId = newSessionId();
      const old = await oldFormatArchive(s.workspace);
      expect(old.subarray(0, 2)).toEqual(GZIP_MAGIC);
      const manifest = { sha256: sha256(old), bytes: old.length, filesCount: s.filesCount };
      await s.backend.writeObject(s.backend.objectName(`${sessionId}.tar.gz`), old);
      await s.backend.writeObject(
        s.backend.objectName(`${sessionId}.json`),
        Buffer.from(JSON.stringify(manifest)),
      );

      const target = await newTarget(env.root);
      expect(await s.backend.store.restore(sessionId, target)).toEqual(manifest);
      expect(await fingerprintAll(target)).toEqual(await fingerprintAll(s.workspace));

      // Saved again (the session slept again), it is in today's format, and the gzip one is gone.
      const saved = await s.backend.store.save(sessionId, s.compressible);
      expect(saved.format).toBe('tar.zst');
      expect(await s.backend.objectsOf(sessionId)).toEqual(
        [
          s.backend.objectName(`${sessionId}.json`),
          s.backend.objectName(`${sessionId}.tar.zst`),
        ].sort(),
      );
      await s.backend.store.remove(sessionId);
      expect(await s.backend.objectsOf(sessionId)).toEqual([]);
    });

    it.each([
      ['zstd', () => s.compressible],
      ['a plain tar (tar itself would take the altered bytes)', () => s.workspace],
    ])('refuses a corrupted archive (%s) without touching the target', async (_format, source) => {
      const sessionId = newSessionId();
      const saved = await s.backend.store.save(sessionId, source());
      const archive = s.backend.objectName(`${sessionId}.${saved.format}`);
      const corrupted = await s.backend.readObject(archive);
      const middle = Math.floor(corrupted.length / 2);
      corrupted[middle] = (corrupted[middle] ?? 0) ^ 0xff;
      await s.backend.writeObject(archive, corrupted);
      const target = await newTarget(env.root);
      await writeFile(join(target, 'marker'), 'before');
      const before = await fingerprint(target);

      const restoring = s.backend.store.restore(sessionId, target);

      await expect(restoring).rejects.toThrow(AppError);
      await expect(restoring).rejects.toMatchObject({
        code: 'internal_error',
        message: 'The saved workspace is corrupt',
      });
      expect(await fingerprint(target)).toEqual(before);

      await s.backend.writeObject(archive, corrupted.subarray(0, middle));
      await expect(s.backend.store.restore(sessionId, target)).rejects.toThrow(/corrupt/);
      expect(await fingerprint(target)).toEqual(before);
    });
  },
);

describe.each(BACKENDS)('the blob store in a %s: removals and run logs', (_name, makeBackend) => {
  const s = useBackend(env, makeBackend);

  it('removes the manifest and the archive of one session, and only those', async () => {
    const sessionId = newSessionId();
    const other = newSessionId();
    await s.backend.store.save(sessionId, s.workspace);
    await s.backend.store.save(other, s.workspace);
    const othersObjects = await s.backend.objectsOf(other);
    expect(othersObjects).toHaveLength(2);

    await s.backend.store.remove(sessionId);

    expect(await s.backend.store.manifest(sessionId)).toBeUndefined();
    expect(await s.backend.objectsOf(sessionId)).toEqual([]);
    expect(await s.backend.objectsOf(other)).toEqual(othersObjects);
    await expect(
      s.backend.store.restore(sessionId, await newTarget(env.root)),
    ).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    await expect(s.backend.store.remove(sessionId)).resolves.toBeUndefined();

    await s.backend.store.remove(other);
    expect(await s.backend.objectsOf(other)).toEqual([]);
  });

  it("moves a session's run logs: saved beside its workspace, restored once, removed with it", async () => {
    const sessionId = newSessionId();
    const logs = await mkdtemp(join(env.root, 'logs-'));
    await writeFile(join(logs, 'proc_1a.json'), '{"id":"proc_1a"}');
    await writeFile(join(logs, 'proc_1a.0.log'), randomBytes(5000));
    // A meta as the agent names it now (its generation), and as agents before it did.
    await writeFile(join(logs, 'proc_3c.7.json'), '{"id":"proc_3c"}');
    expect(await s.backend.store.saveLogs(sessionId, logs)).toBe(true);
    expect(await s.backend.store.saveLogs(sessionId, join(env.root, 'no-such-dir'))).toBe(false);
    // The workspace's manifest does not see them.
    expect(await s.backend.store.manifest(sessionId)).toBeUndefined();

    const target = join(await mkdtemp(join(env.root, 'moved-')), 'ses');
    expect(await s.backend.store.restoreLogs(sessionId, target)).toBe(true);
    expect(await fingerprint(target)).toEqual(await fingerprint(logs));
    // Only a log's plain files come back (a link or another name in a forged archive does not).
    await symlink('/etc/shadow', join(logs, 'proc_2b.json'));
    await writeFile(join(logs, 'other.txt'), 'x');
    await s.backend.store.saveLogs(sessionId, logs);
    const again = join(await mkdtemp(join(env.root, 'moved-')), 'ses');
    expect(await s.backend.store.restoreLogs(sessionId, again)).toBe(true);
    expect((await readdir(again)).sort()).toEqual([
      'proc_1a.0.log',
      'proc_1a.json',
      'proc_3c.7.json',
    ]);
    // Taken: a second restore finds none, and nothing is left in the store.
    expect(await s.backend.store.restoreLogs(sessionId, join(env.root, 'again'))).toBe(false);
    expect(await s.backend.objectsOf(sessionId)).toEqual([]);

    // Saved again: a wake's removal of the workspace's archive leaves them; the session's
    // removal takes them too.
    await s.backend.store.saveLogs(sessionId, logs);
    await s.backend.store.save(sessionId, s.workspace);
    await s.backend.store.remove(sessionId);
    expect(await s.backend.objectsOf(sessionId)).not.toEqual([]);
    await s.backend.store.removeLogs(sessionId);
    expect(await s.backend.objectsOf(sessionId)).toEqual([]);
  });
});

describe.each(BACKENDS)(
  'the blob store in a %s: snapshots and failed saves',
  (_name, makeBackend) => {
    const s = useBackend(env, makeBackend);

    it('keeps a snapshot packed while held, restores it byte for byte again and again, and removes it', async () => {
      for (const [source, format] of [
        [s.compressible, 'tar.zst'],
        [s.workspace, 'tar'],
      ] as const) {
        const snapshotId = `snap_${randomBytes(12).toString('hex')}`;
        let held = 0;
        const saved = await s.backend.store.saveSnapshot(snapshotId, async (pack) => {
          held += 1;
          return pack(source);
        });
        expect(held).toBe(1);
        expect(saved).toMatchObject({ filesCount: s.filesCount, format });
        expect(await s.backend.store.snapshotManifest(snapshotId)).toEqual(saved);
        expect(await s.backend.objectsOf(snapshotId)).toEqual(
          [`${snapshotId}.${format}`, `${snapshotId}.json`]
            .map((name) => s.backend.objectName(name))
            .sort(),
        );
        // A snapshot is not used up by a restore: every session made from it gets all of it.
        for (let i = 0; i < 2; i += 1) {
          const target = await newTarget(env.root);
          expect(await s.backend.store.restoreSnapshot(snapshotId, target)).toEqual(saved);
          expect(await fingerprintAll(target)).toEqual(await fingerprintAll(source));
        }
        await s.backend.store.removeSnapshot(snapshotId);
        expect(await s.backend.objectsOf(snapshotId)).toEqual([]);
        await expect(
          s.backend.store.restoreSnapshot(snapshotId, await newTarget(env.root)),
        ).rejects.toMatchObject({ code: 'snapshot_not_found' });
      }
    });

    it('leaves nothing in the store when a snapshot fails while held', async () => {
      const snapshotId = `snap_${randomBytes(12).toString('hex')}`;
      await expect(
        s.backend.store.saveSnapshot(snapshotId, (pack) =>
          pack(join(env.root, 'no-such-workspace')),
        ),
      ).rejects.toBeInstanceOf(AppError);
      await expect(
        s.backend.store.saveSnapshot(snapshotId, () =>
          Promise.reject(new AppError('session_not_found', 'gone')),
        ),
      ).rejects.toMatchObject({ code: 'session_not_found' });
      expect(await s.backend.objectsOf(snapshotId)).toEqual([]);
      await expect(
        s.backend.store.saveSnapshot('ses_not-a-snapshot', (pack) => pack(s.workspace)),
      ).rejects.toMatchObject({ code: 'invalid_request' });
    });

    it('leaves neither a manifest nor a staging file when a workspace cannot be archived', async () => {
      const sessionId = newSessionId();

      await expect(
        s.backend.store.save(sessionId, join(env.root, 'no-such-workspace')),
      ).rejects.toMatchObject({ code: 'internal_error' });

      expect(await s.backend.store.manifest(sessionId)).toBeUndefined();
      expect(await s.backend.objectsOf(sessionId)).toEqual([]);
    });
  },
);

describe('the S3 blob store when S3 fails', () => {
  let workspace: string;

  beforeAll(async () => {
    workspace = await mkdtemp(join(env.root, 'workspace-'));
    await makeWorkspace(workspace);
  });

  function s3Store(url: string, bucket: string, dir: string): BlobStore {
    const config = loadAgentConfig({
      BLOB_STORE: 's3',
      BLOB_STORE_DIR: dir,
      BLOB_STORE_S3_BUCKET: bucket,
      BLOB_STORE_S3_ENDPOINT: url,
      BLOB_STORE_S3_FORCE_PATH_STYLE: 'true',
    });
    return createBlobStore(config, CREDENTIALS);
  }

  it('throws and leaves nothing behind when the bucket does not exist', async () => {
    const dir = await mkdtemp(join(env.root, 's3-staging-'));
    const store = s3Store(env.endpoint, 'no-such-bucket', dir);
    const sessionId = newSessionId();

    await expect(store.save(sessionId, workspace)).rejects.toMatchObject({
      code: 'service_unavailable',
    });

    expect(await filesUnder(dir)).toEqual([]);
    const buckets = await env.s3.send(new ListBucketsCommand({}));
    expect((buckets.Buckets ?? []).map((bucket) => bucket.Name)).toEqual([BUCKET]);
    expect((await bucketKeys(env.s3)).filter((key) => key.includes(sessionId))).toEqual([]);
  });

  it('throws and leaves nothing behind when the server is down', async () => {
    const dir = await mkdtemp(join(env.root, 's3-staging-'));
    const data = join(env.root, 's3rver-down');
    const first = await startS3rver(data);
    const url = `http://127.0.0.1:${first.port}`;
    await first.server.close();
    const sessionId = newSessionId();

    await expect(s3Store(url, BUCKET, dir).save(sessionId, workspace)).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    expect(await filesUnder(dir)).toEqual([]);

    const again = await startS3rver(data, first.port);
    const client = s3Client(url);
    try {
      expect(await bucketKeys(client)).toEqual([]);
      expect(await s3Store(url, BUCKET, dir).manifest(sessionId)).toBeUndefined();
    } finally {
      client.destroy();
      await again.server.close();
    }
  });
});
