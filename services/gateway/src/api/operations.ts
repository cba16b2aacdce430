import type { ApiOperation } from './api-operation';
import { snapshotOperations } from './snapshot-operations';
import { executeBody } from '../execute/execute-request';
import { executionResultSchema } from '../execute/execution-result';
import { listFilesQuery } from '../routes/files/list-files';
import { makeDirectoryBody } from '../routes/files/make-directory';
import { removeFileBody } from '../routes/files/remove-file';
import { renameFileBody } from '../routes/files/rename-file';
import { statFileQuery } from '../routes/files/stat-file';
import { readFileQuery } from '../routes/files/read-file';
import { writeFileBody } from '../routes/files/write-file';
import { killBody } from '../routes/processes/kill-processes';
import { outputQuery, stdinBody } from '../routes/processes/process-routes';
import { createTerminalBody } from '../routes/terminals/create-terminal';
import { createContextBody } from '../routes/contexts/create-context';
import { checkTtl, createSessionBody } from '../routes/sessions/create-session';
import { forkSessionOperation } from './fork-operation';
import { watchFilesOperation } from './watch-operation';
import { paginationQuery } from '../routes/sessions/list-sessions';
import { egressInput } from '../sessions/session-egress';
import { createWebhookBody } from '../routes/webhooks/webhooks';
import {
  codeContextSchema,
  contextListSchema,
  deletedContextSchema,
  createdWebhookSchema,
  deletedWebhookSchema,
  webhookListSchema,
  deleteResultSchema,
  egressSchema,
  executionEventSchema,
  fileListSchema,
  fileStatSchema,
  madeDirectorySchema,
  removedFileSchema,
  renamedFileSchema,
  killResultSchema,
  processListSchema,
  processOutputSchema,
  processSchema,
  stdinResultSchema,
  rawBytesSchema,
  writeFileResultSchema,
  sessionInfoSchema,
  sessionListSchema,
  sessionSchema,
  terminalSchema,
} from './schemas';

export type { ApiOperation } from './api-operation';
export { COMMON_ERRORS } from './api-operation';

/** Every public operation: app.ts registers these, openapi.ts documents these. */
export const operations = {
  createSession: {
    method: 'post',
    path: '/sessions/create',
    summary: 'Create a session',
    scope: 'sessions',
    body: createSessionBody,
    precheck: checkTtl,
    idempotent: true,
    success: { status: 200, schema: sessionSchema, description: 'The new session' },
    errors: [
      'payload_too_large',
      'session_limit_exceeded',
      'snapshot_not_found',
      'request_timeout',
      'service_unavailable',
    ],
  },
  listSessions: {
    method: 'get',
    path: '/sessions',
    summary: "List the account's sessions, newest first",
    scope: 'sessions',
    query: paginationQuery,
    success: { status: 200, schema: sessionListSchema, description: 'One page of sessions' },
    errors: [],
  },
  forkSession: forkSessionOperation,
  getSession: {
    method: 'get',
    path: '/sessions/:sessionId',
    summary: 'Session info (does not wake the session)',
    scope: 'sessions',
    success: { status: 200, schema: sessionInfoSchema, description: 'Session info' },
    errors: ['session_not_found', 'request_timeout', 'service_unavailable'],
  },
  getEgress: {
    method: 'get',
    path: '/sessions/:sessionId/egress',
    summary: "The session's egress policy (does not wake the session)",
    scope: 'sessions',
    success: { status: 200, schema: egressSchema, description: 'The egress policy' },
    errors: ['session_not_found'],
  },
  setEgress: {
    method: 'put',
    path: '/sessions/:sessionId/egress',
    summary:
      "Replace the session's egress policy: applied to its sandbox at once (connections it now forbids are cut)",
    scope: 'sessions',
    body: egressInput,
    success: { status: 200, schema: egressSchema, description: 'The policy now in force' },
    errors: ['session_not_found', 'request_timeout', 'service_unavailable'],
  },
  deleteSession: {
    method: 'delete',
    path: '/sessions/:sessionId',
    summary: 'Delete a session and all its data',
    scope: 'sessions',
    success: { status: 200, schema: deleteResultSchema, description: 'Deleted' },
    errors: ['session_not_found'],
  },
  execute: {
    method: 'post',
    path: '/execute',
    summary: 'Run code or a command in a session (JSON, or Server-Sent Events with stream: true)',
    scope: 'execute',
    body: executeBody,
    resumable: true,
    success: {
      status: 200,
      schema: executionResultSchema,
      description: 'The execution result; with stream: true, text/event-stream',
      eventStream: executionEventSchema,
    },
    errors: [
      'process_not_found',
      'invalid_path',
      'payload_too_large',
      'file_too_large',
      'session_not_found',
      'execution_timeout',
      'request_timeout',
      'disk_full',
      'service_unavailable',
      'context_not_found',
      'context_restarted',
      'context_lost',
      'conflict',
    ],
  },
  createContext: {
    method: 'post',
    path: '/sessions/:sessionId/contexts',
    summary:
      'Make a code context: a long-lived JavaScript/TypeScript process whose variables stay from one cell (POST /v1/execute with contextId) to the next',
    scope: 'execute',
    body: createContextBody,
    success: { status: 201, schema: codeContextSchema, description: 'The context, ready' },
    errors: ['invalid_path', 'session_not_found', 'context_limit_exceeded'],
  },
  listContexts: {
    method: 'get',
    path: '/sessions/:sessionId/contexts',
    summary: "The session's code contexts",
    scope: 'execute',
    success: { status: 200, schema: contextListSchema, description: 'The contexts' },
    errors: ['session_not_found'],
  },
  deleteContext: {
    method: 'delete',
    path: '/sessions/:sessionId/contexts/:contextId',
    summary: 'Delete a code context (its process ends, its variables are gone)',
    scope: 'execute',
    success: { status: 200, schema: deletedContextSchema, description: 'Deleted' },
    errors: ['session_not_found', 'context_not_found'],
  },
  restartContext: {
    method: 'post',
    path: '/sessions/:sessionId/contexts/:contextId/restart',
    summary: 'Restart a code context: a fresh process under the same id, its variables gone',
    scope: 'execute',
    success: { status: 200, schema: codeContextSchema, description: 'The context, fresh' },
    errors: ['session_not_found', 'context_not_found'],
  },
  killProcesses: {
    method: 'post',
    path: '/execution/kill',
    summary: "Kill one process (and its children) or all of a session's processes",
    scope: 'processes',
    body: killBody,
    success: { status: 200, schema: killResultSchema, description: 'What was killed' },
    errors: ['session_not_found', 'process_not_found'],
  },
  listProcesses: {
    method: 'get',
    path: '/sessions/:sessionId/processes',
    summary: "The session's runs with their state and exit code (does not wake the session)",
    scope: 'processes',
    success: { status: 200, schema: processListSchema, description: 'Oldest first' },
    errors: ['session_not_found'],
  },
  getProcess: {
    method: 'get',
    path: '/sessions/:sessionId/processes/:pid',
    summary: 'One run, by pid (the newest with it) or process id (does not wake the session)',
    scope: 'processes',
    success: { status: 200, schema: processSchema, description: 'The run' },
    errors: ['invalid_request', 'session_not_found', 'process_not_found'],
  },
  processOutput: {
    method: 'get',
    path: '/sessions/:sessionId/processes/:pid/output',
    summary:
      "A run's kept output from an offset (JSON), or followed live as Server-Sent Events (Accept: text/event-stream; Last-Event-ID resumes)",
    scope: 'processes',
    query: outputQuery,
    resumable: true,
    success: {
      status: 200,
      schema: processOutputSchema,
      description: 'The output; with Accept: text/event-stream, events until the run ended',
      eventStream: true,
    },
    errors: ['session_not_found', 'process_not_found'],
  },
  writeStdin: {
    method: 'post',
    path: '/sessions/:sessionId/processes/:pid/stdin',
    summary:
      'Write to (or close) the stdin of a run started with stdin: true; waits until it reads',
    scope: 'processes',
    body: stdinBody,
    success: { status: 200, schema: stdinResultSchema, description: 'What the process took' },
    errors: [
      'session_not_found',
      'process_not_found',
      'stdin_closed',
      'payload_too_large',
      'request_timeout',
    ],
  },
  createTerminal: {
    method: 'post',
    path: '/sessions/:sessionId/terminals',
    summary:
      'Make a terminal (a shell on a pseudo-terminal) to open once with a WebSocket at its path',
    scope: 'execute',
    body: createTerminalBody,
    success: { status: 201, schema: terminalSchema, description: 'The terminal, not yet open' },
    errors: ['invalid_path', 'session_not_found', 'payload_too_large'],
  },
  writeFile: {
    method: 'post',
    path: '/files/write',
    summary: 'Create or replace a file under /workspace (atomically)',
    scope: 'files',
    body: writeFileBody,
    success: { status: 200, schema: writeFileResultSchema, description: 'The written file' },
    errors: [
      'invalid_path',
      'session_not_found',
      'payload_too_large',
      'file_too_large',
      'disk_full',
    ],
  },
  readFile: {
    method: 'get',
    path: '/files/read',
    summary: 'The raw content of a file, with a Content-Type from its extension',
    scope: 'files',
    query: readFileQuery,
    success: { status: 200, schema: rawBytesSchema, description: 'The file', raw: true },
    errors: ['invalid_path', 'session_not_found', 'file_not_found', 'file_too_large'],
  },
  listFiles: {
    method: 'get',
    path: '/files/list',
    summary: 'Files under a directory of /workspace (recursive, files only)',
    scope: 'files',
    query: listFilesQuery,
    success: { status: 200, schema: fileListSchema, description: 'The files' },
    errors: ['invalid_path', 'session_not_found', 'file_not_found'],
  },
  watchFiles: watchFilesOperation,
  statFile: {
    method: 'get',
    path: '/files/stat',
    summary: 'What an entry of /workspace is: type, size, modification time, mode',
    scope: 'files',
    query: statFileQuery,
    success: { status: 200, schema: fileStatSchema, description: 'The entry' },
    errors: ['invalid_path', 'session_not_found', 'file_not_found'],
  },
  removeFile: {
    method: 'post',
    path: '/files/remove',
    summary: 'Remove a file, a symlink or a directory (a non-empty one with recursive: true)',
    scope: 'files',
    body: removeFileBody,
    success: { status: 200, schema: removedFileSchema, description: 'Removed' },
    errors: ['invalid_path', 'session_not_found', 'file_not_found', 'directory_not_empty'],
  },
  renameFile: {
    method: 'post',
    path: '/files/rename',
    summary: 'Move a file, directory or symlink within /workspace',
    scope: 'files',
    body: renameFileBody,
    success: { status: 200, schema: renamedFileSchema, description: 'Moved' },
    errors: [
      'invalid_path',
      'session_not_found',
      'file_not_found',
      'file_exists',
      'directory_not_empty',
      'disk_full',
    ],
  },
  makeDirectory: {
    method: 'post',
    path: '/files/mkdir',
    summary: 'Make a directory and its parents (idempotent)',
    scope: 'files',
    body: makeDirectoryBody,
    success: { status: 200, schema: madeDirectorySchema, description: 'The directory' },
    errors: ['invalid_path', 'session_not_found', 'disk_full'],
  },
  createWebhook: {
    method: 'post',
    path: '/webhooks',
    summary: 'Register a webhook endpoint (Standard Webhooks signing; the secret is shown once)',
    scope: 'webhooks',
    body: createWebhookBody,
    success: { status: 201, schema: createdWebhookSchema, description: 'The new webhook' },
    errors: ['payload_too_large', 'service_unavailable'],
  },
  listWebhooks: {
    method: 'get',
    path: '/webhooks',
    summary: "The account's webhook endpoints",
    scope: 'webhooks',
    success: { status: 200, schema: webhookListSchema, description: 'The webhooks' },
    errors: [],
  },
  deleteWebhook: {
    method: 'delete',
    path: '/webhooks/:webhookId',
    summary: 'Delete a webhook endpoint and drop its pending deliveries',
    scope: 'webhooks',
    success: { status: 200, schema: deletedWebhookSchema, description: 'Deleted' },
    errors: ['not_found'],
  },
  ...snapshotOperations,
} as const satisfies Record<string, ApiOperation>;

export type OperationName = keyof typeof operations;
