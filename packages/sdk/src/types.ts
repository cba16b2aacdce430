import type { operations } from './generated/api.js';

/*
 * The API's request and response shapes, named: each is taken from the types generated from
 * the gateway's OpenAPI document (src/generated/api.ts), so that they cannot drift apart.
 */

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Ok<Op extends keyof operations> = operations[Op]['responses'] extends infer R
  ? R extends { 200: infer Success }
    ? JsonOf<Success>
    : R extends { 201: infer Created }
      ? JsonOf<Created>
      : never
  : never;
type BodyOf<Op extends keyof operations> = JsonOf<operations[Op]['requestBody']>;

/** A new session (spec 2.1); `previewToken` only for a private preview, shown only here. */
export type Session = Ok<'createSession'>;
/** What `Sandbox.info()` reads (spec 2.3): state, counts, metadata. */
export type SessionInfo = Ok<'getSession'>;
/** One page of `Sandbox.list()`. */
export type SessionPage = Ok<'listSessions'>;
export type SessionState = SessionInfo['state'];
/** The body of a session create: ttl, metadata, resourceLimits, preview. */
export type CreateSessionBody = BodyOf<'createSession'>;
/** The body of a run, as the API takes it. */
export type ExecuteBody = BodyOf<'execute'>;
/** How a run ended (spec 2.6). */
export type ExecutionResult = Ok<'execute'>;
/** A file given with a run, written before it starts. */
export type RunFile = NonNullable<ExecuteBody['files']>[number];
export type FileList = Ok<'listFiles'>;
export type FileEntry = FileList['files'][number];
export type WrittenFile = Ok<'writeFile'>;
export type KillResult = Ok<'killProcesses'>;
/** The body of a terminal's creation: shell, cols, rows, env, cwd. */
export type CreateTerminalBody = BodyOf<'createTerminal'>;
/** A terminal made and not opened yet, as the API answers it. */
export type TerminalMade = Ok<'createTerminal'>;

/** One event of a streamed run, in the order the service sends them. */
export type ExecutionEvent =
  | { type: 'stdout'; data: string }
  | { type: 'stderr'; data: string }
  | { type: 'exit'; code: number }
  | { type: 'result'; result: ExecutionResult };
