import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chown, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { SandboxHostIds } from '../docker/host-ids';
import { withFile } from './host-files';

/**
 * A workspace as a tar, made and unpacked as the sandbox user: symlinks are kept (not
 * followed), owners and modes too. A save compresses it with zstd, unless zstd saves little
 * (random or already compressed data): then the tar is stored as it is, since unpacking zstd
 * costs about 200 ms per 100 MB even when it only copies (ADR 19). gzip archives of agents
 * before that still unpack.
 */

/** How an archive is compressed; its manifest says which (none: gzip, from before ADR 19). */
export type ArchiveFormat = 'tar.zst' | 'tar' | 'tar.gz';

export const ARCHIVE_FORMATS: readonly ArchiveFormat[] = ['tar.zst', 'tar', 'tar.gz'];

/** tar's options for each format (tar runs the compressor as its own child, as the same user). */
const COMPRESSION: Record<ArchiveFormat, string[]> = {
  'tar.zst': ['--zstd'],
  tar: [],
  'tar.gz': ['--gzip'],
};

/** zstd is kept when its archive is at most this part of the plain tar. */
export const WORTH_COMPRESSING = 0.9;

/** `setpriv` arguments that run what follows as the sandbox user (`ids`), with no other group. */
const asSandboxUser = (ids: SandboxHostIds): string[] => [
  '--reuid',
  String(ids.uid),
  '--regid',
  String(ids.gid),
  '--clear-groups',
];

/** tar's error output kept (its end), for the error message. */
const MAX_STDERR_CHARS = 4096;

const SAFE_PATH = process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Starts `tar` as the sandbox user (never as root on a sandbox's files), in `cwd` so that it
 * needs no access to the directories above the workspace, with none of the agent's
 * environment (its tokens). `readAll` adds only CAP_DAC_READ_SEARCH, so that files the
 * sandbox made unreadable (`chmod 000`) are still saved; tar then writes nothing but its
 * output and stays on the workspace's own filesystem. `exited` rejects unless tar exits 0,
 * and resolves with (the end of) what tar wrote to stderr.
 */
export function startTar(
  ids: SandboxHostIds,
  args: string[],
  stdio: { stdin?: number | 'pipe'; stdout?: number | 'pipe' },
  cwd?: string,
  readAll = false,
  program = 'tar',
): { child: ChildProcess; exited: Promise<string> } {
  const caps = readAll
    ? ['--inh-caps', '+dac_read_search', '--ambient-caps', '+dac_read_search']
    : [];
  const child = spawn('setpriv', [...asSandboxUser(ids), ...caps, program, ...args], {
    stdio: [stdio.stdin ?? 'ignore', stdio.stdout ?? 'ignore', 'pipe'],
    env: { PATH: SAFE_PATH, LC_ALL: 'C' },
    ...(cwd ? { cwd } : {}),
  });
  const exited = new Promise<string>((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-MAX_STDERR_CHARS);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(stderr)
        : reject(new Error(`${program} ${args.join(' ')}: ${stderr.trim()}`)),
    );
  });
  return { child, exited };
}

export const packArgs = (format: ArchiveFormat): string[] => [
  '--one-file-system',
  '--sparse',
  ...COMPRESSION[format],
  '-cf',
  '-',
  '.',
];

/** Archives the directory `source` into the (new or truncated) file `archive`, synced. */
async function packWorkspace(
  ids: SandboxHostIds,
  source: string,
  archive: string,
  format: ArchiveFormat,
): Promise<void> {
  await withFile(archive, 'w', async (handle) => {
    await startTar(ids, packArgs(format), { stdout: handle.fd }, source, true).exited;
    await handle.sync();
  });
}

/**
 * Rejects unless `archive` reads back as a complete tar of `format`; resolves with the size
 * of the tar itself (uncompressed).
 */
export async function checkArchive(
  ids: SandboxHostIds,
  archive: string,
  format: ArchiveFormat,
): Promise<number> {
  const stderr = await withFile(archive, 'r', (handle) => {
    const tar = startTar(ids, [...COMPRESSION[format], '--totals', '-tf', '-'], {
      stdin: handle.fd,
    });
    return tar.exited;
  });
  const total = /Total bytes read: (\d+)/.exec(stderr)?.[1];
  if (total === undefined) throw new Error(`tar --totals: no total in ${stderr.trim()}`);
  return Number(total);
}

/**
 * Archives the directory `source` into a staging file (`stagingFile` names one per format),
 * synced and read back whole: zstd, or the plain tar when zstd saves less than a tenth. The
 * caller removes the staging files of every format, whatever happens.
 */
export async function archiveWorkspace(
  ids: SandboxHostIds,
  source: string,
  stagingFile: (format: ArchiveFormat) => string,
): Promise<{ file: string; format: ArchiveFormat }> {
  const compressed = stagingFile('tar.zst');
  await packWorkspace(ids, source, compressed, 'tar.zst');
  const tarBytes = await checkArchive(ids, compressed, 'tar.zst');
  if ((await stat(compressed)).size <= WORTH_COMPRESSING * tarBytes) {
    return { file: compressed, format: 'tar.zst' };
  }
  await rm(compressed, { force: true });
  const plain = stagingFile('tar');
  await packWorkspace(ids, source, plain, 'tar');
  await checkArchive(ids, plain, 'tar');
  return { file: plain, format: 'tar' };
}

/**
 * Run as the sandbox user in the target with the scratch directory's name as $1: moves what
 * was unpacked there into place (renames on one filesystem, one `mv` for all), then gives the
 * target the saved root's mode and time. A root saved unreadable is opened first; a directory
 * moves to a new parent only if it is writable, so a locked one (`chmod 000`) is opened for
 * its move and locked again. No `cd`: the shell would go by the absolute path, whose parents
 * the sandbox user cannot search.
 */
const PLACE_UNPACKED = [
  'set -e',
  'mode=$(stat -c %a "$1"); time=$(stat -c %y "$1")',
  'chmod u+rwx "$1"',
  `find "$1" -mindepth 1 -maxdepth 1 -type d ! -perm -u=w -exec sh -c '${[
    'set -e',
    'm=$(stat -c %a "$1"); n=./${1##*/}',
    'chmod u+w "$1"; mv -T -- "$1" "$n"; chmod "$m" "$n"',
  ].join('; ')}' lock {} ";"`,
  'find "$1" -mindepth 1 -maxdepth 1 -exec mv -t . -- {} +',
  'rmdir "$1"',
  'touch -d "$time" .',
  'chmod "$mode" .',
].join('\n');

/** Run as the sandbox user in the target: removes the scratch directory $1, locked parts too. */
const REMOVE_UNPACKED = 'chmod -R u+rwx -- "$1" 2>/dev/null; rm -rf -- "$1"';

/** Runs the shell `script` as the sandbox user in `cwd`, with `args` as $1…. */
function sandboxShell(
  ids: SandboxHostIds,
  script: string,
  cwd: string,
  args: string[],
): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'setpriv',
      [...asSandboxUser(ids), '/bin/sh', '-c', script, 'sandbox-shell', ...args],
      { cwd, env: { PATH: SAFE_PATH, LC_ALL: 'C' } },
      (err, _stdout, stderr) =>
        err
          ? reject(new Error(`${err.message}: ${stderr.trim().slice(-MAX_STDERR_CHARS)}`))
          : resolve(),
    );
  });
}

/**
 * An unpack in progress, into a scratch directory of its own inside the target: the target
 * itself changes only in `place`, after the caller has checked the whole archive.
 */
export interface Unpacking {
  /**
   * Takes the archive as it arrives (or, when tar reads the file itself, takes and drops
   * it). It never fails and never stops taking bytes: once tar has gone (it refused the
   * archive), the rest is dropped, so that the caller can still read its source to the end
   * (and hash all of it).
   */
  input: Writable;
  /** Resolves when tar has unpacked the whole archive; rejects with tar's error. */
  unpacked: Promise<void>;
  /** Moves what was unpacked into the target (which must hold none of its names). */
  place(): Promise<void>;
  /** Stops tar if it still runs and removes what it unpacked: the target is as before. */
  discard(): Promise<void>;
}

/**
 * Starts unpacking an archive of `format` into the existing directory `target` while its
 * bytes are still arriving, as the sandbox user, into a new scratch directory in `target`
 * (so that moving the files into place is renames on one filesystem). With `fd` (an open
 * file of the archive, at offset 0) tar reads the file itself and `input` only counts as a
 * reader: the caller still reads the archive through it, to check it.
 */
export async function startUnpack(
  ids: SandboxHostIds,
  target: string,
  format: ArchiveFormat,
  fd?: number,
): Promise<Unpacking> {
  const scratch = `.restoring-${randomBytes(8).toString('hex')}`;
  const scratchPath = join(target, scratch);
  // Made by the agent in a directory of its own, then handed to the sandbox user to fill.
  await mkdir(scratchPath, { mode: 0o700 });
  await chown(scratchPath, ids.uid, ids.gid);
  const { child, exited } = startTar(
    ids,
    // -p: modes as saved (without it, tar as a user applies its umask: 0777 came back 0755).
    [...COMPRESSION[format], '-xpf', '-'],
    { stdin: fd ?? 'pipe' },
    scratchPath,
  );
  const unpacked = exited.then(() => undefined);
  unpacked.catch(() => undefined); // awaited by the caller, or by discard
  const input =
    child.stdin === null ? new Writable({ write: (_c, _e, done) => done() }) : forward(child.stdin);
  return {
    input,
    unpacked,
    place: () => sandboxShell(ids, PLACE_UNPACKED, target, [scratch]),
    discard: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await unpacked.catch(() => undefined);
      await sandboxShell(ids, REMOVE_UNPACKED, target, [scratch]);
    },
  };
}

/**
 * Bytes written go on to `stdin` (a child's), and on failure nowhere: EPIPE once the child
 * has exited (its own error says why), after which the rest is dropped.
 */
function forward(stdin: Writable): Writable {
  let gone = false;
  stdin.on('error', () => (gone = true));
  stdin.on('close', () => (gone = true));
  return new Writable({
    highWaterMark: 1 << 20,
    write(chunk: Buffer, _encoding, done) {
      if (gone) return done();
      stdin.write(chunk, () => done());
    },
    final(done) {
      if (!gone) stdin.end();
      done();
    },
  });
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}

/** Regular files under `dir`, without following symlinks. */
export async function countFiles(dir: string): Promise<number> {
  let count = 0;
  const queue = [dir];
  while (queue.length > 0) {
    const current = queue.pop() as string;
    for (const entry of await readdir(current, { withFileTypes: true }).catch(() => [])) {
      if (entry.isDirectory()) queue.push(join(current, entry.name));
      else if (entry.isFile()) count += 1;
    }
  }
  return count;
}
