import { FileNotFoundError } from './errors.js';
import { openWatch, type FileWatch, type WatchOptions } from './file-watch.js';
import type { HttpClient, RetryPolicy } from './http.js';
import type {
  FileList,
  FileStat,
  MadeDirectory,
  RemovedFile,
  RenamedFile,
  WrittenFile,
} from './types.js';

/** What `files.write` takes: text (UTF-8), bytes, or a stream of bytes (never held whole). */
export type FileContent =
  string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface FileCallOptions {
  signal?: AbortSignal;
}

export interface RemoveOptions extends FileCallOptions {
  /** Remove a directory with everything under it (else only an empty one is removed). */
  recursive?: boolean;
}

export interface RenameOptions extends FileCallOptions {
  /** Replace what is at the destination (a file, a symlink or an empty directory). */
  overwrite?: boolean;
}

export interface WriteOptions extends FileCallOptions {
  /** Called as the upload goes, with the bytes sent so far. */
  onProgress?: (sentBytes: number) => void;
}

const BASE64_CHUNK = 3 * 64 * 1024; // a multiple of 3: chunks encode without padding between

interface NodeBufferClass {
  from(
    buffer: ArrayBufferLike,
    offset: number,
    length: number,
  ): { toString(enc: 'base64'): string };
}

export function base64(bytes: Uint8Array): string {
  // Buffer where there is one (Node, Bun), else btoa over a binary string.
  const NodeBuffer = (globalThis as { Buffer?: NodeBufferClass }).Buffer;
  if (NodeBuffer !== undefined) {
    return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  }
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

async function* chunksOf(content: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>) {
  if (content instanceof ReadableStream) {
    const reader = content.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    yield* content;
  }
}

/**
 * The JSON body of a file write, made as it is sent: the content base64-encoded chunk by
 * chunk from the source, so that a large file is never held whole on this side.
 */
function streamedWriteBody(
  head: Record<string, string>,
  content: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  onProgress: ((sentBytes: number) => void) | undefined,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const prefix = JSON.stringify({ ...head, encoding: 'base64' }).slice(0, -1) + ',"content":"';
  const source = chunksOf(content)[Symbol.asyncIterator]();
  let carry = new Uint8Array(0);
  let sent = 0;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(encoder.encode(prefix));
        return;
      }
      const next = await source.next();
      if (next.done) {
        controller.enqueue(encoder.encode(`${base64(carry)}"}`));
        controller.close();
        return;
      }
      sent += next.value.byteLength;
      onProgress?.(sent);
      const joined = new Uint8Array(carry.byteLength + next.value.byteLength);
      joined.set(carry);
      joined.set(next.value, carry.byteLength);
      const whole = joined.byteLength - (joined.byteLength % 3);
      carry = joined.slice(whole);
      for (let at = 0; at < whole; at += BASE64_CHUNK) {
        controller.enqueue(
          encoder.encode(base64(joined.subarray(at, Math.min(whole, at + BASE64_CHUNK)))),
        );
      }
    },
    async cancel() {
      await source.return?.();
    },
  });
}

/** The files of a session's /workspace (paths are relative to it). */
export class Files {
  /** @internal Made by `Sandbox`; use `sandbox.files`. */
  constructor(
    private readonly http: HttpClient,
    private readonly sessionId: string,
  ) {}

  /**
   * Creates or replaces a file, atomically; parent directories are made. Text and bytes are
   * sent again on a 429/503; a stream is sent once (it cannot be read twice).
   */
  async write(
    path: string,
    content: FileContent,
    options: WriteOptions = {},
  ): Promise<WrittenFile> {
    const head = { sessionId: this.sessionId, path };
    if (typeof content === 'string' || content instanceof Uint8Array) {
      const json =
        typeof content === 'string'
          ? { ...head, content }
          : { ...head, encoding: 'base64', content: base64(content) };
      const written = await this.http.json<WrittenFile>({
        method: 'POST',
        path: '/files/write',
        json,
        signal: options.signal,
        retry: 'safe',
      });
      options.onProgress?.(typeof content === 'string' ? written.size : content.byteLength);
      return written;
    }
    return this.http.json<WrittenFile>({
      method: 'POST',
      path: '/files/write',
      body: () => ({
        body: streamedWriteBody(head, content, options.onProgress),
        contentType: 'application/json',
      }),
      signal: options.signal,
      retry: 'never',
    });
  }

  /** The file's bytes as a stream, read as it arrives (for large files). */
  async readStream(
    path: string,
    options: FileCallOptions = {},
  ): Promise<ReadableStream<Uint8Array>> {
    const response = await this.download(path, options);
    return response.body ?? new ReadableStream({ start: (c) => c.close() });
  }

  /** The file's bytes. */
  async read(path: string, options: FileCallOptions = {}): Promise<Uint8Array> {
    const response = await this.download(path, options);
    return new Uint8Array(await response.arrayBuffer());
  }

  /** The file as UTF-8 text. */
  async readText(path: string, options: FileCallOptions = {}): Promise<string> {
    return new TextDecoder().decode(await this.read(path, options));
  }

  /** The files under `dir` (default: /workspace itself), recursively; files only. */
  list(dir?: string, options: FileCallOptions = {}): Promise<FileList> {
    return this.ask<FileList>('/files/list', dir, options);
  }

  /**
   * What the entry at `path` is: `type` (`file`, `directory`, `symlink`, `other`), `size`,
   * `modified` and `mode` (permission bits). A symlink is described itself, never followed.
   * `"."` names /workspace itself.
   *
   * @throws FileNotFoundError when nothing is there.
   * @throws InvalidPathError for a path that leaves /workspace (by `..` or a symlink).
   */
  stat(path: string, options: FileCallOptions = {}): Promise<FileStat> {
    return this.ask<FileStat>('/files/stat', path, options);
  }

  /**
   * Whether anything (a file, a directory, a symlink, even a dangling one) is at `path`.
   * Errors other than "not found" (a bad path, a missing session) are thrown.
   */
  async exists(path: string, options: FileCallOptions = {}): Promise<boolean> {
    try {
      await this.stat(path, options);
      return true;
    } catch (err) {
      if (err instanceof FileNotFoundError) return false;
      throw err;
    }
  }

  /**
   * Removes a file, a symlink (never what it points to) or a directory. A directory that is
   * not empty needs `recursive: true`. /workspace itself cannot be removed.
   *
   * @throws FileNotFoundError when nothing is there.
   * @throws DirectoryNotEmptyError for a non-empty directory without `recursive`.
   */
  remove(path: string, options: RemoveOptions = {}): Promise<RemovedFile> {
    return this.change<RemovedFile>(
      '/files/remove',
      { path, recursive: options.recursive ?? false },
      options,
    );
  }

  /**
   * Moves a file, a directory or a symlink (itself) to `to`, making `to`'s parent directories.
   * Not sent again after a connection cut (a second move would not find `from`).
   *
   * @throws FileNotFoundError when nothing is at `from`.
   * @throws FileExistsError when something is at `to` and `overwrite` is not set.
   * @throws DirectoryNotEmptyError when `to` is a non-empty directory.
   */
  rename(from: string, to: string, options: RenameOptions = {}): Promise<RenamedFile> {
    const body = { from, to, overwrite: options.overwrite ?? false };
    return this.change<RenamedFile>('/files/rename', body, options, 'refused');
  }

  /**
   * Makes a directory and its parents. Idempotent: `created` is false when the directory was
   * there already.
   *
   * @throws InvalidPathError when a file is in the way.
   */
  mkdir(path: string, options: FileCallOptions = {}): Promise<MadeDirectory> {
    return this.change<MadeDirectory>('/files/mkdir', { path }, options);
  }

  /**
   * Watches `dir` (default: /workspace itself; `recursive` for the directories under it too)
   * and resolves once the watch is in place: its changes (`create`, `write`, `remove`,
   * `rename`) come from `for await (const event of watch)`. A session holds 4 watches.
   *
   * @throws WatchLimitExceededError past 4 watches, or a tree of over 10,000 directories.
   * @throws FileNotFoundError when `dir` does not exist; InvalidPathError when it is not a
   *   directory or leaves /workspace.
   */
  watch(dir?: string, options: WatchOptions = {}): Promise<FileWatch> {
    return openWatch(this.http, this.sessionId, dir, options);
  }

  /** A GET of the session's entry at `path` (undefined: /workspace), retried when safe. */
  private ask<T>(endpoint: string, path: string | undefined, options: FileCallOptions): Promise<T> {
    return this.http.json<T>({
      method: 'GET',
      path: endpoint,
      query: { sessionId: this.sessionId, path },
      signal: options.signal,
      retry: 'safe',
    });
  }

  /** A POST of `body` for the session; sent again after a cut only as `retry` allows. */
  private change<T>(
    endpoint: string,
    body: Record<string, unknown>,
    options: FileCallOptions,
    retry: RetryPolicy = 'safe',
  ): Promise<T> {
    return this.http.json<T>({
      method: 'POST',
      path: endpoint,
      json: { sessionId: this.sessionId, ...body },
      signal: options.signal,
      retry,
    });
  }

  /** The answer of a file read, its body not read yet. */
  private download(path: string, options: FileCallOptions): Promise<Response> {
    return this.http.send({
      method: 'GET',
      path: '/files/read',
      query: { sessionId: this.sessionId, path },
      signal: options.signal,
      retry: 'safe',
      stream: true,
    });
  }
}
