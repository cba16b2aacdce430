import type { Readable } from 'node:stream';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { FileListing } from '@sandbox/contract';
import type { Principal } from '../auth/principal';
import type { SessionAccess } from '../sessions/session-access';
import { decodeFile, type FileInputBody } from './file-content';
import { announcingDiskFull } from '../webhooks/disk-full';
import type { WebhookStore } from '../webhooks/webhook-store';
import { workspaceRelativePath } from './workspace-path';

/** Largest file the read endpoint returns. */
export const MAX_READ_BYTES = 256 * 1024 * 1024;
/** Most entries a listing returns (decisions.md). */
export const MAX_LIST_ENTRIES = 10_000;

/** Files of a session's /workspace (spec 4.6–4.8). Each call counts as activity. */
export class FilesService {
  constructor(
    private readonly access: SessionAccess,
    private readonly webhooks: WebhookStore,
    private readonly logger: Logger,
  ) {}

  async write(principal: Principal, sessionId: string, file: FileInputBody) {
    const decoded = decodeFile(file, principal.limits);
    const { session, agent } = await this.access.open(principal, sessionId);
    const written = await announcingDiskFull(
      this.webhooks,
      this.logger,
      { accountId: principal.accountId, id: session.id, diskMb: session.resourceLimits.disk },
      () => agent.writeFile(session.id, decoded.path, decoded.content),
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
}
