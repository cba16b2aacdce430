import type { Command } from 'commander';
import {
  Sandbox,
  Snapshots,
  type ClientOptions,
  type CreateOptions,
  type SessionPage,
} from '@sandbox/sdk';
import { OUTCOMES } from './exit-codes';

/** Where the CLI reads and writes, and how it hears Ctrl-C; main.ts passes the process's own. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /**
   * Calls `listener` at Ctrl-C (SIGINT) until the function returned is called. While no
   * command listens, Ctrl-C ends the CLI at once (main.ts).
   */
  onInterrupt(listener: () => void): () => void;
}

/** The part of the SDK the commands start from: sessions made, found, listed. */
export interface Api {
  create(options: Omit<CreateOptions, keyof ClientOptions>): Promise<Sandbox>;
  connect(sessionId: string, options?: { previewToken?: string }): Promise<Sandbox>;
  list(page: { limit: number; offset: number }): Promise<SessionPage>;
  /** The account's snapshots (ADR 44). */
  snapshots(): Pick<Snapshots, 'list' | 'delete'>;
}

/** The SDK itself, reaching the API with `client`. */
export function sdkApi(client: ClientOptions): Api {
  return {
    create: (options) => Sandbox.create({ ...client, ...options }),
    connect: (sessionId, options = {}) => Sandbox.connect(sessionId, { ...client, ...options }),
    list: (page) => Sandbox.list({ ...client, ...page }),
    snapshots: () => new Snapshots(client),
  };
}

/** What every command gets: the process's streams and the API (as the global options say). */
export interface Context {
  io: CliIo;
  api(): Api;
  /** Records the exit code of the command that ran. */
  setExitCode(code: number): void;
}

/** A command line that does not say what to do: exit code 2, with the command's usage. */
export class UsageError extends Error {}

/**
 * A command's action for commander: runs `fn` (given the command's arguments, options and the
 * command) and records the exit code it resolves with; a UsageError becomes commander's usage
 * error of that command (its message and usage line on stderr, exit code 2).
 */
export function action<A extends unknown[]>(
  ctx: Pick<Context, 'setExitCode'>,
  fn: (...args: A) => Promise<number>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      ctx.setExitCode(await fn(...args));
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      (args.at(-1) as Command).error(err.message, {
        exitCode: OUTCOMES.usage.code,
        code: 'sandbox.usage',
      });
    }
  };
}
