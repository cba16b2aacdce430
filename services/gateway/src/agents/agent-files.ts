import type * as grpc from '@grpc/grpc-js';
import {
  isFileType,
  type FileStat,
  type MadeDirectory,
  type RemovedFile,
  type RenamedFile,
  type WatchEndReason,
  type WatchEvent,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type {
  AgentClient as GrpcAgentClient,
  FileStat__Output,
  MakeDirectoryResponse__Output,
  RemoveFileResponse__Output,
  RenameFileResponse__Output,
} from '@sandbox/proto';
import type { UnaryCall } from './agent-channel';
import { followWatch, type FlowControl } from './agent-streams';

/** A unary call with the file operation deadline (spec 8.2: 30 s); failures as AppErrors. */
export type FileCall = <Res>(call: UnaryCall<Res>) => Promise<Res>;

export function toFileStat(stat: FileStat__Output): FileStat {
  if (!isFileType(stat.type)) {
    throw new AppError('internal_error', `The node answered an entry of unknown type ${stat.type}`);
  }
  const { path, type, size, modified, mode } = stat;
  return { path, type, size, modified, mode };
}

/**
 * The file operations of one agent beyond write, read and list (issue 42): stat, remove,
 * rename, mkdir. Paths are relative to /workspace, already checked by the gateway; the
 * sandbox's runner checks them again against symlinks.
 */
export class AgentFiles {
  constructor(
    private readonly client: GrpcAgentClient,
    private readonly call: FileCall,
    private readonly metadata: () => grpc.Metadata,
  ) {}

  /** What the entry is; a symlink is described itself. 404 file_not_found when missing. */
  async stat(sessionId: string, path: string): Promise<FileStat> {
    return toFileStat(
      await this.call<FileStat__Output>((md, options, cb) =>
        this.client.statFile({ sessionId, path }, md, options, cb),
      ),
    );
  }

  /** Removes a file, a symlink or a directory (a non-empty one only when `recursive`). */
  async remove(sessionId: string, path: string, recursive: boolean): Promise<RemovedFile> {
    const removed = await this.call<RemoveFileResponse__Output>((md, options, cb) =>
      this.client.removeFile({ sessionId, path, recursive }, md, options, cb),
    );
    return { path: removed.path };
  }

  /** Moves an entry, making the destination's parents; an existing one only with `overwrite`. */
  async rename(
    sessionId: string,
    move: { from: string; to: string; overwrite: boolean },
  ): Promise<RenamedFile> {
    const renamed = await this.call<RenameFileResponse__Output>((md, options, cb) =>
      this.client.renameFile({ sessionId, ...move }, md, options, cb),
    );
    return { from: renamed.from, to: renamed.to };
  }

  /** Makes a directory and its parents; `created` false when it was there. */
  async mkdir(sessionId: string, path: string): Promise<MadeDirectory> {
    const made = await this.call<MakeDirectoryResponse__Output>((md, options, cb) =>
      this.client.makeDirectory({ sessionId, path }, md, options, cb),
    );
    return { path: made.path, created: made.created };
  }

  /**
   * Watches a directory (ADR 60): each event to `onEvent` until the node ends the watch
   * (resolves with why) or `signal` aborts it (rejects with 408). No deadline: it lasts as
   * long as its client.
   */
  watch(
    sessionId: string,
    spec: { path: string; recursive: boolean },
    onEvent: (event: WatchEvent, flow: FlowControl) => void,
    signal: AbortSignal,
  ): Promise<WatchEndReason> {
    return followWatch(
      () => this.client.watchFiles({ sessionId, ...spec }, this.metadata()),
      onEvent,
      signal,
    );
  }
}
