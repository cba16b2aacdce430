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
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { createBlobStore, type BlobStore } from '@sandbox/agent';
import { loadAgentConfig } from '@sandbox/config';

/** Workspaces, archives and stores for the blob store's tests (s3-blob-store.test.ts). */

export const BUCKET = 'workspaces';
export const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const PREFIX = 'sandbox-workspaces/';

export async function startS3rver(
  directory: string,
  port = 0,
): Promise<{ server: S3rver; port: number }> {
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

/** What a test file of the blob store works in: a temporary root, and s3rver with BUCKET. */
export interface S3Fixture {
  root: string;
  endpoint: string;
  s3: S3Client;
}

/** Makes the file's temporary root and starts s3rver before all its tests; removes both after. */
export function useS3rver(): S3Fixture {
  const fixture = {} as S3Fixture;
  let server: S3rver | undefined;
  beforeAll(async () => {
    fixture.root = await mkdtemp(join(tmpdir(), 's3-blob-store-'));
    const started = await startS3rver(join(fixture.root, 's3rver'));
    server = started.server;
    fixture.endpoint = `http://127.0.0.1:${started.port}`;
    fixture.s3 = s3Client(fixture.endpoint);
  });
  afterAll(async () => {
    fixture.s3?.destroy();
    await server?.close();
    if (fixture.root) await rm(fixture.root, { recursive: true, force: true });
  });
  return fixture;
}

export function s3Client(url: string): S3Client {
  return new S3Client({
    region: 'us-east-1',
    endpoint: url,
    forcePathStyle: true,
    credentials: CREDENTIALS,
  });
}

export async function bucketKeys(client: S3Client, bucket = BUCKET): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
}

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const chownToSandboxUser = (path: string) =>
  promisify(execFile)('chown', ['-R', '1000:1000', path]);
export const newSessionId = () => `ses_${randomBytes(12).toString('hex')}`;
export const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** A POSIX tar header's magic, at offset 257. */
export const isPlainTar = (bytes: Buffer) =>
  bytes.subarray(257, 262).toString('latin1') === 'ustar';
export const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** Every non-directory under `dir`, relative to it. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/** Type, owner, mode and content (sha256) or link target of everything under `dir`. */
export async function fingerprint(dir: string): Promise<string[]> {
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
export async function makeWorkspace(dir: string, compressible = false): Promise<number> {
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
export async function fingerprintAll(dir: string): Promise<string[]> {
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
export async function oldFormatArchive(workspace: string): Promise<Buffer> {
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

/** A fresh directory under `root` owned by the sandbox user, as a new session's disk would be. */
export async function newTarget(root: string): Promise<string> {
  const target = await mkdtemp(join(root, 'target-'));
  await chownToSandboxUser(target);
  return target;
}

export interface Backend {
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

export async function localBackend({ root }: S3Fixture): Promise<Backend> {
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

export async function s3Backend({ root, endpoint, s3 }: S3Fixture): Promise<Backend> {
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

/** A backend, and two workspaces to save in it. */
export interface BackendSetup {
  backend: Backend;
  /** Random bytes mostly: zstd would save little, so it is stored as a plain tar. */
  workspace: string;
  /** Source code mostly: stored as zstd. */
  compressible: string;
  filesCount: number;
}

/** One setup per backend kind: the describes of a kind share it. */
const setups = new Map<(env: S3Fixture) => Promise<Backend>, Promise<BackendSetup>>();

/**
 * The backend `makeBackend` makes and its two workspaces, made before the describe's first
 * test (once per backend kind in a file); after each test, no stray file may be left.
 */
export function useBackend(
  env: S3Fixture,
  makeBackend: (env: S3Fixture) => Promise<Backend>,
): BackendSetup {
  const setup = {} as BackendSetup;
  beforeAll(async () => {
    let made = setups.get(makeBackend);
    if (made === undefined) {
      made = (async () => {
        const backend = await makeBackend(env);
        const workspace = await mkdtemp(join(env.root, 'workspace-'));
        const filesCount = await makeWorkspace(workspace);
        const compressible = await mkdtemp(join(env.root, 'workspace-'));
        await makeWorkspace(compressible, true);
        return { backend, workspace, compressible, filesCount };
      })();
      setups.set(makeBackend, made);
    }
    Object.assign(setup, await made);
  });
  afterEach(async () => {
    expect(await setup.backend.strayFiles()).toEqual([]);
  });
  return setup;
}
