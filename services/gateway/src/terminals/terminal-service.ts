import { randomBytes } from 'node:crypto';
import { AppError } from '@sandbox/errors';
import type { Principal } from '../auth/principal';
import { checkEnv } from '../execute/execute-request';
import { resolveWorkingDir } from '../files/workspace-path';
import type { SessionAccess } from '../sessions/session-access';
import { hashTerminalToken, type TerminalStore } from './terminal-store';

/** How long a terminal's token opens it (a browser opens its socket right away). */
export const TERMINAL_TOKEN_TTL_MS = 60_000;
const DEFAULT_SHELL = '/bin/bash';

export interface CreateTerminalInput {
  shell?: string | undefined;
  cols?: number | undefined;
  rows?: number | undefined;
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
}

export interface TerminalView {
  terminalId: string;
  sessionId: string;
  /** Where the WebSocket opens, under the API's base (…/v1). */
  path: string;
  /** Single-use, for clients that cannot send the API key on a WebSocket (browsers). */
  token: string;
  tokenExpiresAt: string;
}

/** Makes terminals of a caller's sessions, to be opened once by a WebSocket. */
export class TerminalService {
  constructor(
    private readonly store: TerminalStore,
    private readonly access: Pick<SessionAccess, 'ensureExists'>,
  ) {}

  async create(
    principal: Principal,
    sessionId: string,
    input: CreateTerminalInput,
  ): Promise<TerminalView> {
    // Another account's session is 404, as a missing one; nothing is woken yet.
    await this.access.ensureExists(principal, sessionId);
    const shell = input.shell ?? DEFAULT_SHELL;
    if (!shell.startsWith('/') || shell.includes('\0')) {
      throw new AppError('invalid_request', 'shell must be an absolute path', {
        details: { field: 'shell' },
      });
    }
    const id = `term_${randomBytes(12).toString('hex')}`;
    const token = `tty_${randomBytes(24).toString('base64url')}`;
    const expiresAt = new Date(Date.now() + TERMINAL_TOKEN_TTL_MS);
    await this.store.create(
      {
        id,
        accountId: principal.accountId,
        sessionId,
        spec: {
          argv: [shell],
          env: { TERM: 'xterm-256color', ...checkEnv(input.env ?? {}, principal.limits) },
          workingDir: resolveWorkingDir(input.cwd),
          cols: input.cols ?? 80,
          rows: input.rows ?? 24,
        },
      },
      hashTerminalToken(token),
      expiresAt,
    );
    return {
      terminalId: id,
      sessionId,
      path: `/sessions/${sessionId}/terminals/${id}/connect`,
      token,
      tokenExpiresAt: expiresAt.toISOString(),
    };
  }
}
