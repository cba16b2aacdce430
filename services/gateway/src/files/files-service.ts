import type { Readable } from 'node:stream';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type {
  FileListing,
  FileStat,
  MadeDirectory,
  RemovedFile,
  RenamedFile,
  WatchEndReason,
  WatchEvent,
} from '@sandbox/contract';
import type { FlowControl } from '../agents/agent-streams';
import type { Principal } from '../auth/principal';
import type { SessionAccess } from '../sessions/session-access';
import type { SessionRecord } from '../sessions/session-record';
import { decodeFile, type FileInputBody } from './file-content';
import { announcingDiskFull } from '../webhooks/disk-full';
import type { WebhookStore } from '../webhooks/webhook-store';
import { entryRelativePath, workspaceRelativePath } from './workspace-path';

/** Largest file the read endpoint returns. */
export const MAX_READ_BYTES = 256 * 1024 * 1024;
/** Most entries a listing returns (decisions.md). */
export const MAX_LIST_ENTRIES = 10_000;

/**
 * Files of a session's /workspace (spec 4.6–4.8, and stat, remove, rename, mkdir of issue 42).
 * Each call counts as activity and wakes the session.
 */
export class FilesService {
  constructor(
    private readonly access: SessionAccess,
    private readonly webhooks: WebhookStore,
    private readonly logger: Logger,
  ) {}

  async write(principal: Principal, sessionId: string, file: FileInputBody) {
    const decoded = decodeFile(file, principal.limits);
    const { session, agent } = await this.access.open(principal, sessionId);
    const written = await this.announcingDiskFull(principal, session, () =>
      agent.writeFile(session.id, decoded.path, decoded.content),
    );
    return { path: decoded.path, size: written.size };
  }

  /** A file's size and its bytes as a stream (refused past MAX_READ_BYTES). */
  async read(
    principal: Principal,
    sessionId: string,
    path: string,
  ): Promise<{ size: number; body: Readable }> {
    const relative = workspaceRelativePath(path);
    const { session, agent } = await this.access.open(principal, sessionId);
    const file = await agent.openFile(session.id, relative);
    if (file.size > MAX_READ_BYTES) {
      file.body.destroy();
      throw new AppError('file_too_large', `The file is larger than ${MAX_READ_BYTES} bytes`, {
        details: { path, size: file.size, max: MAX_READ_BYTES },
      });
    }
    // A slow reader must not let the session go idle (its sandbox paused) under the read.
    file.body.once('close', this.access.keepActiveWhile(session.id));
    return file;
  }

  /**
   * One page of the files under `path` (default the root), sorted by path, with their total;
   * `truncated` when the node stopped counting at its cap.
   */
  async list(
    principal: Principal,
    sessionId: string,
    path: string | undefined,
    page: { offset: number; limit: number },
  ): Promise<FileListing> {
    const relative = path === undefined ? '' : workspaceRelativePath(path, { allowRoot: true });
    const { session, agent } = await this.access.open(principal, sessionId);
    return agent.listFiles(session.id, relative, page);
  }

  /**
   * Watches a directory (ADR 60; default the workspace) for `onEvent` until the watch ends
   * (resolves with why) or `signal` aborts it. Opening it wakes the session and counts as
   * activity; the open watch does not.
   */
  async watch(
    principal: Principal,
    sessionId: string,
    spec: { path: string | undefined; recursive: boolean },
    onEvent: (event: WatchEvent, flow: FlowControl) => void,
    signal: AbortSignal,
  ): Promise<WatchEndReason> {
    const path =
      spec.path === undefined ? '' : workspaceRelativePath(spec.path, { allowRoot: true });
    const { session, agent } = await this.access.open(principal, sessionId);
    return agent.files.watch(session.id, { path, recursive: spec.recursive }, onEvent, signal);
  }

  /** What an entry is (a symlink described itself); the workspace itself for "." too. */
  async stat(principal: Principal, sessionId: string, path: string): Promise<FileStat> {
    const relative = entryRelativePath(path, { allowRoot: true });
    const { session, agent } = await this.access.open(principal, sessionId);
    return agent.files.stat(session.id, relative);
  }

  /** Removes a file, a symlink or a directory (non-empty: `recursive`); never the workspace. */
  async remove(
    principal: Principal,
    sessionId: string,
    { path, recursive }: { path: string; recursive: boolean },
  ): Promise<RemovedFile> {
    const relative = entryRelativePath(path);
    const { session, agent } = await this.access.open(principal, sessionId);
    return agent.files.remove(session.id, relative, recursive);
  }

  /** Moves an entry; an existing destination is 409 file_exists unless `overwrite`. */
  async rename(
    principal: Principal,
    sessionId: string,
    move: { from: string; to: string; overwrite: boolean },
  ): Promise<RenamedFile> {
    const from = entryRelativePath(move.from);
    const to = entryRelativePath(move.to);
    const { session, agent } = await this.access.open(principal, sessionId);
    // It makes the destination's parents: a full disk is announced as for a write.
    return this.announcingDiskFull(principal, session, () =>
      agent.files.rename(session.id, { from, to, overwrite: move.overwrite }),
    );
  }

  /** Makes a directory and its parents; idempotent (`created` false when it was there). */
  async mkdir(principal: Principal, sessionId: string, path: string): Promise<MadeDirectory> {
    const relative = entryRelativePath(path, { allowRoot: true });
    const { session, agent } = await this.access.open(principal, sessionId);
    return this.announcingDiskFull(principal, session, () =>
      agent.files.mkdir(session.id, relative),
    );
  }

  private announcingDiskFull<T>(
    principal: Principal,
    session: SessionRecord,
    work: () => Promise<T>,
  ): Promise<T> {
    const { id, resourceLimits } = session;
    const target = { accountId: principal.accountId, id, diskMb: resourceLimits.disk };
    return announcingDiskFull(this.webhooks, this.logger, target, work);
  }
}
