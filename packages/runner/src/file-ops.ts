import { workingDirectory } from './exec';
import { makeDirectory, removeEntry, renameEntry, statEntry } from './file-manage';
import { listFiles, openFile, writeFiles } from './files';
import { missingPackages } from './imports';
import type { OpHandler } from './op-handlers';
import { extractBundle } from './packages';
import { RunnerError } from './protocol';

/** Writes every file of the request or none. */
export const writeFilesOp: OpHandler<'writeFiles'> = async ({ channel }, { id, files }) => {
  channel.emit({ id, ev: 'written', files: await writeFiles(files) });
};

/** Sends a file: `opened` with its size, its bytes as `chunk` events, then `read`. */
export const readFileOp: OpHandler<'readFile'> = async ({ channel, flows }, { id, path }) => {
  const { size, stream } = await openFile(path);
  channel.emit({ id, ev: 'opened', size });
  // The size was announced (Content-Length): a file cut short meanwhile is an error.
  if ((await channel.sendWithFlowControl(id, stream, flows)) !== size) {
    throw new RunnerError('internal_error', `${path} shrank while it was read`);
  }
  channel.emit({ id, ev: 'read', size });
};

/** One page of the files under a directory. */
export const listFilesOp: OpHandler<'listFiles'> = async ({ channel }, request) => {
  channel.emit({ id: request.id, ev: 'listed', ...(await listFiles(request.path, request)) });
};

/** What an entry is (a symlink described itself). */
export const statFileOp: OpHandler<'statFile'> = async ({ channel }, { id, path }) => {
  channel.emit({ id, ev: 'stat', ...(await statEntry(path)) });
};

/** Removes a file, a symlink or a directory (a non-empty one only when `recursive`). */
export const removeFileOp: OpHandler<'removeFile'> = async ({ channel }, request) => {
  const { id, path, recursive } = request;
  channel.emit({ id, ev: 'removed', ...(await removeEntry(path, recursive)) });
};

/** Moves an entry; an existing destination only with `overwrite`. */
export const renameFileOp: OpHandler<'renameFile'> = async ({ channel }, request) => {
  const { id, from, to, overwrite } = request;
  channel.emit({ id, ev: 'renamed', ...(await renameEntry(from, to, overwrite)) });
};

/** Makes a directory and its parents. */
export const makeDirectoryOp: OpHandler<'makeDirectory'> = async ({ channel }, { id, path }) => {
  channel.emit({ id, ev: 'madeDirectory', ...(await makeDirectory(path)) });
};

/** The packages some code imports that its working directory does not have. */
export const missingPackagesOp: OpHandler<'missingPackages'> = async ({ channel }, request) => {
  const cwd = await workingDirectory(request.cwd);
  channel.emit({
    id: request.id,
    ev: 'packages',
    packages: await missingPackages(request.code, cwd),
  });
};

/** Unpacks a bundle of installed packages into a working directory. */
export const installBundleOp: OpHandler<'installBundle'> = async ({ channel }, request) => {
  await extractBundle(await workingDirectory(request.cwd), Buffer.from(request.bundle, 'base64'));
  channel.emit({ id: request.id, ev: 'installed' });
};
