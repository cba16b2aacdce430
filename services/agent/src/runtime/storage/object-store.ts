import type { Readable } from 'node:stream';
import { AppError } from '@sandbox/errors';

/** An object's bytes as they are read, and the size the store reports for it. */
export interface StoredObject {
  size: number;
  body: Readable;
  /**
   * The object's open file, when the store keeps it as one (closed with `body`): a child
   * process can read it as its stdin, with no copy through this one. `body` reads it by
   * position, so that the two do not share an offset.
   */
  fd?: number;
}

/**
 * Where the blob store keeps its bytes: named objects, each written whole. Keys are plain
 * names (`[A-Za-z0-9_.-]`, not starting with a dot). Failures are `AppError`s.
 */
export interface ObjectStore {
  /** Stores a copy of the file `localFile` as `key`, replacing any object of that key. */
  put(key: string, localFile: string): Promise<void>;
  /** The object `key`, or `undefined` if there is none. The caller consumes or destroys it. */
  read(key: string): Promise<StoredObject | undefined>;
  putText(key: string, text: string): Promise<void>;
  /** The object `key` as UTF-8 text, or `undefined` if there is none. */
  getText(key: string): Promise<string | undefined>;
  /** Deletes the object `key`; deleting a missing object is no error. */
  delete(key: string): Promise<void>;
  /**
   * Where the store is a directory of this host: moves `localFile` (synced, on the store's own
   * filesystem) into it as `key`, no copy made; `localFile` is gone after.
   */
  adopt?(key: string, localFile: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/;

/** Rejects a key that is not a plain name (so that none can name a path outside the store). */
export function checkObjectKey(key: string): string {
  if (!KEY.test(key)) throw new AppError('internal_error', 'Not an object key');
  return key;
}
