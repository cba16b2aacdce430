import { createHash } from 'node:crypto';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@sandbox/errors';
import { ARCHIVE_FORMATS, type ArchiveFormat } from './workspace-archive';

/** What the blob store says of a stored archive: the commit point of a save (ADR 12). */
export interface ArchiveManifest {
  /** Of the archive; empty for a kept disk. */
  sha256: string;
  /** Of the archive; for a kept disk, what its files take on it. */
  bytes: number;
  filesCount: number;
  /**
   * How the archive is compressed (absent in manifests written before zstd: gzip); `disk`:
   * no archive, the session's own disk was kept on the node (SANDBOX_DEEP_SLEEP=disk).
   */
  format?: ArchiveFormat | 'disk';
}

export function parseManifest(text: string): ArchiveManifest {
  const unreadable = (cause?: unknown) =>
    new AppError('internal_error', 'The saved workspace has an unreadable manifest', { cause });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw unreadable(err);
  }
  const { sha256, bytes, filesCount, format } = (value ?? {}) as Record<string, unknown>;
  const disk = format === 'disk';
  if (
    (format !== undefined && !disk && !ARCHIVE_FORMATS.includes(format as ArchiveFormat)) ||
    typeof sha256 !== 'string' ||
    !(disk ? sha256 === '' : /^[0-9a-f]{64}$/.test(sha256)) ||
    typeof bytes !== 'number' ||
    !Number.isSafeInteger(bytes) ||
    typeof filesCount !== 'number' ||
    !Number.isSafeInteger(filesCount)
  ) {
    throw unreadable();
  }
  return {
    sha256,
    bytes,
    filesCount,
    ...(format === undefined ? {} : { format: format as ArchiveFormat | 'disk' }),
  };
}

export const unpackFailed = (cause: unknown) =>
  new AppError('internal_error', 'The saved workspace could not be unpacked', { cause });

/** The format of the archive `manifest` names (none for a kept disk). */
export function formatOf(manifest: ArchiveManifest): ArchiveFormat {
  if (manifest.format === 'disk') {
    throw new AppError('internal_error', 'A kept disk has no archive to restore');
  }
  return manifest.format ?? 'tar.gz';
}

/** Reads `body` to its end, into `sink` if given: the bytes' sha256 and count. */
export async function digest(
  body: Readable,
  sink?: Writable,
): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(body, count, sink ?? new Writable({ write: (_chunk, _encoding, done) => done() }));
  return { sha256: hash.digest('hex'), bytes };
}
