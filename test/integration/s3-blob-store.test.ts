import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import {
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { createBlobStore, type BlobStore } from '@sandbox/agent';
import { loadAgentConfig } from '@sandbox/config';
import { AppError } from '@sandbox/errors';

/**
 * The blob store of deep-sleeping workspaces, in a local directory and in a real S3 protocol
 * server (s3rver, in-process, over HTTP): every byte, mode and link comes back, archives are
 * zstd and the gzip ones of earlier agents still restore, a corrupt archive is refused before
 * the target changes, and a failed save leaves neither a manifest nor a staging file. No
 * Docker needed; tar runs as uid 1000 like on a node, so this runs as root.
 */

const BUCKET = 'workspaces';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const PREFIX = 'sandbox-workspaces/';

let root: string;
let server: S3rver;
let endpoint: string;
let s3: S3Client;

async function startS3rver(directory: string, port = 0): Promise<{ server: S3rver; port: number }> {
  const started = new S3rver({
    address: '127.0.0.1',
    port,
    directory,
    silent: true,
    configureBuckets: [{ name: BUCKET, configs: [] }],
  });
  const address: AddressInfo = await started.run();
  return { server: started, port: address.port };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 's3-blob-store-'));
  const started = await startS3rver(join(root, 's3rver'));
  server = started.server;
  endpoint = `http://127.0.0.1:${started.port}`;
  s3 = s3Client(endpoint);
});

afterAll(async () => {
  s3?.destroy();
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

function s3Client(url: string): S3Client {
  return new S3Client({
    region: 'us-east-1',
    endpoint: url,
    forcePathStyle: true,
    credentials: CREDENTIALS,
  });
}

async function bucketKeys(client: S3Client, bucket = BUCKET): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const chownToSandboxUser = (path: string) =>
  promisify(execFile)('chown', ['-R', '1000:1000', path]);
const newSessionId = () => `ses_${randomBytes(12).toString('hex')}`;
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** A POSIX tar header's magic, at offset 257. */
const isPlainTar = (bytes: Buffer) => bytes.subarray(257, 262).toString('latin1') === 'ustar';
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** Every non-directory under `dir`, relative to it. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/** Type, owner, mode and content (sha256) or link target of everything under `dir`. */
async function fingerprint(dir: string): Promise<string[]> {
  const lines: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const stat = await lstat(path);
    const owner = `${stat.uid} ${(stat.mode & 0o7777).toString(8)}`;
    const name = relative(dir, path);
    if (entry.isSymbolicLink()) lines.push(`l ${name} -> ${await readlink(path)} ${stat.uid}`);
    else if (entry.isDirectory()) lines.push(`d ${name} ${owner}`);
    else lines.push(`f ${name} ${owner} ${stat.size} ${sha256(await readFile(path))}`);
  }
  return lines.sort();
}

/**
 * A workspace of nested files (one larger than an upload part: random bytes, or with
 * `compressible` text), an empty file, a name
 * with spaces, an empty directory, symlinks (one dangling, one to a host path), modes a
 * user's umask would change (0666, 0777, sticky, setgid) and files the sandbox made
 * unreadable, owned by the sandbox user; its root has mode 0750. Returns the number of
 * regular files.
 */
async function makeWorkspace(dir: string, compressible = false): Promise<number> {
  await mkdir(join(dir, 'a/b/c'), { recursive: true });
  await mkdir(join(dir, 'empty-dir'));
  const bigBytes = 12 * 1024 * 1024 + 17;
  await writeFile(
    join(dir, 'a/big.bin'),
    compressible
      ? Buffer.from(
          Array.from({ length: 300_000 }, (_, i) => `export const value${i} = ${i * 7};\n`)
            .join('')
            .slice(0, bigBytes),
        )
      : randomBytes(bigBytes),
  );
  for (let i = 1; i <= 20; i += 1) {
    await writeFile(join(dir, `a/b/c/f${i}`), randomBytes(i * 97));
  }
  await chmod(join(dir, 'a/b/c/f1'), 0o600);
  await writeFile(join(dir, 'empty.txt'), '');
  await writeFile(join(dir, 'name with spaces.txt'), 'héllo\n');
  await symlink('a/big.bin', join(dir, 'link-to-big'));
  await symlink('does/not/exist', join(dir, 'dangling'));
  await symlink('/etc', join(dir, 'host-etc'));
  await writeFile(join(dir, 'shared.txt'), 'everyone writes\n');
  await mkdir(join(dir, 'shared-dir'));
  await mkdir(join(dir, 'tmp-like'));
  await mkdir(join(dir, 'group-dir'));
  await writeFile(join(dir, 'locked.txt'), 'locked-content\n');
  await mkdir(join(dir, 'locked-dir'));
  await writeFile(join(dir, 'locked-dir/inner'), 'inner-content\n');
  await chownToSandboxUser(dir);
  await chmod(join(dir, 'shared.txt'), 0o666);
  await chmod(join(dir, 'shared-dir'), 0o777);
  await chmod(join(dir, 'tmp-like'), 0o1777);
  await chmod(join(dir, 'group-dir'), 0o2775);
  await chmod(join(dir, 'locked.txt'), 0o000);
  await chmod(join(dir, 'locked-dir'), 0o000);
  await chmod(dir, 0o750);
  return 26;
}

/** Type, owner, mode and content of `dir` and everything under it, locked parts included. */
async function fingerprintAll(dir: string): Promise<string[]> {
  const locked = [join(dir, 'locked.txt'), join(dir, 'locked-dir')];
  const root = await lstat(dir);
  const modes = await Promise.all(locked.map(async (path) => (await lstat(path)).mode & 0o7777));
  await Promise.all(locked.map((path) => chmod(path, 0o700)));
  try {
    return [`. ${root.uid} ${(root.mode & 0o7777).toString(8)}`, ...modes.map(String)].concat(
      await fingerprint(dir),
    );
  } finally {
    await Promise.all(locked.map((path, i) => chmod(path, modes[i] ?? 0)));
  }
}

/** The workspace as a gzipped tar, made the way agents before zstd made them. */
async function oldFormatArchive(workspace: string): Promise<Buffer> {
  const { stdout } = await promisify(execFile)(
    'setpriv',
    [
      '--reuid=1000',
      '--regid=1000',
      '--clear-groups',
      '--inh-caps=+dac_read_search',
      '--ambient-caps=+dac_read_search',
      'tar',
      '--one-file-system',
      '--sparse',
      '-czf',
      '-',
      '.',
    ],
    { cwd: workspace, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** A fresh directory owned by the sandbox user, as a new session's disk would be. */
async function newTarget(): Promise<string> {
  const target = await mkdtemp(join(root, 'target-'));
  await chownToSandboxUser(target);
  return target;
}

interface Backend {
  store: BlobStore;
  /** `BLOB_STORE_DIR`. */
  dir: string;
  /** The stored name of the object `name` (`<session>.json`, `<session>.tar.zst`). */
  objectName(name: string): string;
  /** The stored objects of one session. */
  objectsOf(sessionId: string): Promise<string[]>;
  /** Files under `BLOB_STORE_DIR` that are not stored objects (staging files, temporaries). */
  strayFiles(): Promise<string[]>;
  readObject(name: string): Promise<Buffer>;
  writeObject(name: string, bytes: Buffer): Promise<void>;
}

async function localBackend(): Promise<Backend> {
  const dir = await mkdtemp(join(root, 'local-blobs-'));
  const objects = async () =>
    (await readdir(dir, { withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort();
  return {
    store: createBlobStore(loadAgentConfig({ BLOB_STORE_DIR: dir })),
    dir,
    objectName: (name) => name,
    objectsOf: async (sessionId) => (await objects()).filter((name) => name.includes(sessionId)),
    strayFiles: async () => {
      const stored = await objects();
      return (await filesUnder(dir)).filter((file) => !stored.includes(file));
    },
    readObject: (name) => readFile(join(dir, name)),
    writeObject: (name, bytes) => writeFile(join(dir, name), bytes),
  };
}

async function s3Backend(): Promise<Backend> {
  const dir = await mkdtemp(join(root, 's3-staging-'));
  const config = loadAgentConfig({
    BLOB_STORE: 's3',
    BLOB_STORE_DIR: dir,
    BLOB_STORE_S3_BUCKET: BUCKET,
    BLOB_STORE_S3_ENDPOINT: endpoint,
    BLOB_STORE_S3_FORCE_PATH_STYLE: 'true',
  });
  return {
    store: createBlobStore(config, CREDENTIALS),
    dir,
    objectName: (name) => `${PREFIX}${name}`,
    objectsOf: async (sessionId) =>
      (await bucketKeys(s3)).filter((name) => name.includes(sessionId)),
    strayFiles: () => filesUnder(dir),
    readObject: async (name) => {
      const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: name }));
      return Buffer.from(await got.Body!.transformToByteArray());
    },
    writeObject: async (name, bytes) => {
      await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: name, Body: bytes }));
    },
  };
}

describe.each([
  ['local directory', localBackend],
  ['S3', s3Backend],
])('the blob store in a %s', (_name, makeBackend) => {
  let backend: Backend;
  /** Random bytes mostly: zstd would save little, so it is stored as a plain tar. */
  let workspace: string;
  /** Source code mostly: stored as zstd. */
  let compressible: string;
  let filesCount: number;

  beforeAll(async () => {
    backend = await makeBackend();
    workspace = await mkdtemp(join(root, 'workspace-'));
    filesCount = await makeWorkspace(workspace);
    compressible = await mkdtemp(join(root, 'workspace-'));
    await makeWorkspace(compressible, true);
  });

  afterEach(async () => {
    expect(await backend.strayFiles()).toEqual([]);
  });

  it('saves a workspace as zstd, commits it with a manifest and restores every byte', async () => {
    const sessionId = newSessionId();
    const archive = backend.objectName(`${sessionId}.tar.zst`);
    const manifest = backend.objectName(`${sessionId}.json`);
    expect(await backend.store.manifest(sessionId)).toBeUndefined();

    const saved = await backend.store.save(sessionId, compressible);

    const stored = await backend.readObject(archive);
    expect(stored.subarray(0, 4)).toEqual(ZSTD_MAGIC);
    expect(stored.length).toBeLessThan(4 * 1024 * 1024);
    expect(saved).toEqual({
      sha256: sha256(stored),
      bytes: stored.length,
      filesCount,
      format: 'tar.zst',
    });
    expect(await backend.store.manifest(sessionId)).toEqual(saved);
    expect(JSON.parse((await backend.readObject(manifest)).toString('utf8'))).toEqual(saved);
    expect(await backend.objectsOf(sessionId)).toEqual([archive, manifest].sort());

    const target = await newTarget();
    expect(await backend.store.restore(sessionId, target)).toEqual(saved);
    expect(await fingerprintAll(target)).toEqual(await fingerprintAll(compressible));
    expect((await lstat(join(target, 'link-to-big'))).isSymbolicLink()).toBe(true);
    expect(await readlink(join(target, 'link-to-big'))).toBe('a/big.bin');
    expect(await readlink(join(target, 'dangling'))).toBe('does/not/exist');
    expect(await readlink(join(target, 'host-etc'))).toBe('/etc');
    expect((await lstat(join(target, 'empty.txt'))).size).toBe(0);
    expect((await lstat(join(target, 'shared-dir'))).mode & 0o7777).toBe(0o777);
  });

  it('saves a workspace that zstd would not shrink as a plain tar, and restores it', async () => {
    const sessionId = newSessionId();

    const saved = await backend.store.save(sessionId, workspace);

    expect(saved.format).toBe('tar');
    const stored = await backend.readObject(backend.objectName(`${sessionId}.tar`));
    expect(isPlainTar(stored)).toBe(true);
    expect(saved).toEqual({
      sha256: sha256(stored),
      bytes: stored.length,
      filesCount,
      format: 'tar',
    });
    const target = await newTarget();
    expect(await backend.store.restore(sessionId, target)).toEqual(saved);
    expect(await fingerprintAll(target)).toEqual(await fingerprintAll(workspace));
    await backend.store.remove(sessionId);
  });

  it('restores a gzip archive of an agent before zstd, whose manifest names no format', async () => {
    const sessionId = newSessionId();
    const old = await oldFormatArchive(workspace);
    expect(old.subarray(0, 2)).toEqual(GZIP_MAGIC);
    const manifest = { sha256: sha256(old), bytes: old.length, filesCount };
    await backend.writeObject(backend.objectName(`${sessionId}.tar.gz`), old);
    await backend.writeObject(
      backend.objectName(`${sessionId}.json`),
      Buffer.from(JSON.stringify(manifest)),
    );

    const target = await newTarget();
    expect(await backend.store.restore(sessionId, target)).toEqual(manifest);
    expect(await fingerprintAll(target)).toEqual(await fingerprintAll(workspace));

    // Saved again (the session slept again), it is in today's format, and the gzip one is gone.
    const saved = await backend.store.save(sessionId, compressible);
    expect(saved.format).toBe('tar.zst');
    expect(await backend.objectsOf(sessionId)).toEqual(
      [backend.objectName(`${sessionId}.json`), backend.objectName(`${sessionId}.tar.zst`)].sort(),
    );
    await backend.store.remove(sessionId);
    expect(await backend.objectsOf(sessionId)).toEqual([]);
  });

  it.each([
    ['zstd', () => compressible],
    ['a plain tar (tar itself would take the altered bytes)', () => workspace],
  ])('refuses a corrupted archive (%s) without touching the target', async (_format, source) => {
    const sessionId = newSessionId();
    const saved = await backend.store.save(sessionId, source());
    const archive = backend.objectName(`${sessionId}.${saved.format}`);
    const corrupted = await backend.readObject(archive);
    const middle = Math.floor(corrupted.length / 2);
    corrupted[middle] = (corrupted[middle] ?? 0) ^ 0xff;
    await backend.writeObject(archive, corrupted);
    const target = await newTarget();
    await writeFile(join(target, 'marker'), 'before');
    const before = await fingerprint(target);

    const restoring = backend.store.restore(sessionId, target);

    await expect(restoring).rejects.toThrow(AppError);
    await expect(restoring).rejects.toMatchObject({
      code: 'internal_error',
      message: 'The saved workspace is corrupt',
    });
    expect(await fingerprint(target)).toEqual(before);

    await backend.writeObject(archive, corrupted.subarray(0, middle));
    await expect(backend.store.restore(sessionId, target)).rejects.toThrow(/corrupt/);
    expect(await fingerprint(target)).toEqual(before);
  });

  it('removes the manifest and the archive of one session, and only those', async () => {
    const sessionId = newSessionId();
    const other = newSessionId();
    await backend.store.save(sessionId, workspace);
    await backend.store.save(other, workspace);
    const othersObjects = await backend.objectsOf(other);
    expect(othersObjects).toHaveLength(2);

    await backend.store.remove(sessionId);

    expect(await backend.store.manifest(sessionId)).toBeUndefined();
    expect(await backend.objectsOf(sessionId)).toEqual([]);
    expect(await backend.objectsOf(other)).toEqual(othersObjects);
    await expect(backend.store.restore(sessionId, await newTarget())).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    await expect(backend.store.remove(sessionId)).resolves.toBeUndefined();

    await backend.store.remove(other);
    expect(await backend.objectsOf(other)).toEqual([]);
  });

  it("moves a session's run logs: saved beside its workspace, restored once, removed with it", async () => {
    const sessionId = newSessionId();
    const logs = await mkdtemp(join(root, 'logs-'));
    await writeFile(join(logs, 'proc_1a.json'), '{"id":"proc_1a"}');
    await writeFile(join(logs, 'proc_1a.0.log'), randomBytes(5000));
    // A meta as the agent names it now (its generation), and as agents before it did.
    await writeFile(join(logs, 'proc_3c.7.json'), '{"id":"proc_3c"}');
    expect(await backend.store.saveLogs(sessionId, logs)).toBe(true);
    expect(await backend.store.saveLogs(sessionId, join(root, 'no-such-dir'))).toBe(false);
    // The workspace's manifest does not see them.
    expect(await backend.store.manifest(sessionId)).toBeUndefined();

    const target = join(await mkdtemp(join(root, 'moved-')), 'ses');
    expect(await backend.store.restoreLogs(sessionId, target)).toBe(true);
    expect(await fingerprint(target)).toEqual(await fingerprint(logs));
    // Only a log's plain files come back (a link or another name in a forged archive does not).
    await symlink('/etc/shadow', join(logs, 'proc_2b.json'));
    await writeFile(join(logs, 'other.txt'), 'x');
    await backend.store.saveLogs(sessionId, logs);
    const again = join(await mkdtemp(join(root, 'moved-')), 'ses');
    expect(await backend.store.restoreLogs(sessionId, again)).toBe(true);
    expect((await readdir(again)).sort()).toEqual([
      'proc_1a.0.log',
      'proc_1a.json',
      'proc_3c.7.json',
    ]);
    // Taken: a second restore finds none, and nothing is left in the store.
    expect(await backend.store.restoreLogs(sessionId, join(root, 'again'))).toBe(false);
    expect(await backend.objectsOf(sessionId)).toEqual([]);

    // Saved again: a wake's removal of the workspace's archive leaves them; the session's
    // removal takes them too.
    await backend.store.saveLogs(sessionId, logs);
    await backend.store.save(sessionId, workspace);
    await backend.store.remove(sessionId);
    expect(await backend.objectsOf(sessionId)).not.toEqual([]);
    await backend.store.removeLogs(sessionId);
    expect(await backend.objectsOf(sessionId)).toEqual([]);
  });

  it('keeps a snapshot packed while held, restores it byte for byte again and again, and removes it', async () => {
    for (const [source, format] of [
      [compressible, 'tar.zst'],
      [workspace, 'tar'],
    ] as const) {
      const snapshotId = `snap_${randomBytes(12).toString('hex')}`;
      let held = 0;
      const saved = await backend.store.saveSnapshot(snapshotId, async (pack) => {
        held += 1;
        return pack(source);
      });
      expect(held).toBe(1);
      expect(saved).toMatchObject({ filesCount, format });
      expect(await backend.store.snapshotManifest(snapshotId)).toEqual(saved);
      expect(await backend.objectsOf(snapshotId)).toEqual(
        [`${snapshotId}.${format}`, `${snapshotId}.json`]
          .map((name) => backend.objectName(name))
          .sort(),
      );
      // A snapshot is not used up by a restore: every session made from it gets all of it.
      for (let i = 0; i < 2; i += 1) {
        const target = await newTarget();
        expect(await backend.store.restoreSnapshot(snapshotId, target)).toEqual(saved);
        expect(await fingerprintAll(target)).toEqual(await fingerprintAll(source));
      }
      await backend.store.removeSnapshot(snapshotId);
      expect(await backend.objectsOf(snapshotId)).toEqual([]);
      await expect(
        backend.store.restoreSnapshot(snapshotId, await newTarget()),
      ).rejects.toMatchObject({ code: 'snapshot_not_found' });
    }
  });

  it('leaves nothing in the store when a snapshot fails while held', async () => {
    const snapshotId = `snap_${randomBytes(12).toString('hex')}`;
    await expect(
      backend.store.saveSnapshot(snapshotId, (pack) => pack(join(root, 'no-such-workspace'))),
    ).rejects.toBeInstanceOf(AppError);
    await expect(
      backend.store.saveSnapshot(snapshotId, () =>
        Promise.reject(new AppError('session_not_found', 'gone')),
      ),
    ).rejects.toMatchObject({ code: 'session_not_found' });
    expect(await backend.objectsOf(snapshotId)).toEqual([]);
    await expect(
      backend.store.saveSnapshot('ses_not-a-snapshot', (pack) => pack(workspace)),
    ).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('leaves neither a manifest nor a staging file when a workspace cannot be archived', async () => {
    const sessionId = newSessionId();

    await expect(
      backend.store.save(sessionId, join(root, 'no-such-workspace')),
    ).rejects.toMatchObject({ code: 'internal_error' });

    expect(await backend.store.manifest(sessionId)).toBeUndefined();
    expect(await backend.objectsOf(sessionId)).toEqual([]);
  });
});

describe('the S3 blob store when S3 fails', () => {
  let workspace: string;

  beforeAll(async () => {
    workspace = await mkdtemp(join(root, 'workspace-'));
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
    const dir = await mkdtemp(join(root, 's3-staging-'));
    const store = s3Store(endpoint, 'no-such-bucket', dir);
    const sessionId = newSessionId();

    await expect(store.save(sessionId, workspace)).rejects.toMatchObject({
      code: 'service_unavailable',
    });

    expect(await filesUnder(dir)).toEqual([]);
    const buckets = await s3.send(new ListBucketsCommand({}));
    expect((buckets.Buckets ?? []).map((bucket) => bucket.Name)).toEqual([BUCKET]);
    expect((await bucketKeys(s3)).filter((key) => key.includes(sessionId))).toEqual([]);
  });

  it('throws and leaves nothing behind when the server is down', async () => {
    const dir = await mkdtemp(join(root, 's3-staging-'));
    const data = join(root, 's3rver-down');
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
