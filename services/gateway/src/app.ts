import { AppError } from '@sandbox/errors';
import { apiCors } from './http/cors';
import express, { type Express } from 'express';
import type { Logger } from '@sandbox/logger';
import type { AccountStore } from './accounts/account-store';
import { buildOpenApiDocument } from './api/openapi';
import { operationRoute, type HandlerOf } from './api/operation-route';
import { operations, type ApiOperation, type OperationName } from './api/operations';
import { authenticate, requireScope } from './auth/authenticate';
import { tokenAuth } from './auth/token-auth';
import type { ExecuteService } from './execute/execute-service';
import type { FilesService } from './files/files-service';
import type { ContextsService } from './contexts/contexts-service';
import { createContext } from './routes/contexts/create-context';
import { ForkService } from './forks/fork-service';
import { forkSession } from './routes/sessions/fork-session';
import { deleteContext } from './routes/contexts/delete-context';
import { listContexts } from './routes/contexts/list-contexts';
import { restartContext } from './routes/contexts/restart-context';
import { readinessRoute, type ReadinessCheck } from './http/readiness';
import type { ProcessesService } from './processes/processes-service';
import { errorHandler, notFound } from './http/error-handler';
import { requestContext } from './http/request-context';
import type { IdempotencyOptions } from './idempotency/idempotent';
import { authenticateAndLimit } from './http/rate-limit-middleware';
import type { RateLimiter } from './limits/rate-limiter';
import { adminRouter } from './routes/admin/accounts';
import { executeRoute } from './routes/execute/execute';
import {
  getProcess,
  listProcesses,
  processOutput,
  writeStdin,
} from './routes/processes/process-routes';
import { listFiles } from './routes/files/list-files';
import { makeDirectory } from './routes/files/make-directory';
import { removeFile } from './routes/files/remove-file';
import { renameFile } from './routes/files/rename-file';
import { statFile } from './routes/files/stat-file';
import { watchFiles } from './routes/files/watch-files';
import { readFile } from './routes/files/read-file';
import { writeFile } from './routes/files/write-file';
import { killProcesses } from './routes/processes/kill-processes';
import { announceNode } from './routes/internal/announce-node';
import { resolvePreview } from './routes/internal/resolve-preview';
import { nodesRouter } from './routes/admin/nodes';
import type { NodeViews } from './nodes/node-views';
import type { GatewayMetrics } from './metrics/gateway-metrics';
import { createSession } from './routes/sessions/create-session';
import { deleteSession } from './routes/sessions/delete-session';
import { getSession } from './routes/sessions/get-session';
import { listSessions } from './routes/sessions/list-sessions';
import type { SessionAccess } from './sessions/session-access';
import { getEgress, setEgress } from './routes/sessions/session-egress-routes';
import type { SessionService } from './sessions/session-service';
import type { SessionStore } from './sessions/session-store';
import { createWebhook, deleteWebhook, listWebhooks } from './routes/webhooks/webhooks';
import type { WebhookService } from './webhooks/webhook-service';
import { createTerminal } from './routes/terminals/create-terminal';
import type { TerminalService } from './terminals/terminal-service';
import {
  createSnapshot,
  deleteSnapshot,
  getSnapshot,
  listSnapshots,
} from './routes/snapshots/snapshot-routes';
import type { SnapshotService } from './snapshots/snapshot-service';

export interface AppDeps {
  logger: Logger;
  /** Counts every request (absent in unit tests of the routes). */
  metrics?: GatewayMetrics;
  accounts: AccountStore;
  sessionStore: SessionStore;
  sessions: SessionService;
  sessionAccess: SessionAccess;
  /** The node registry and this replica's heartbeats, for the admin API. */
  fleet: NodeViews;
  idempotency: IdempotencyOptions;
  execute: ExecuteService;
  files: FilesService;
  contexts: ContextsService;
  processes: ProcessesService;
  terminals: TerminalService;
  webhooks: WebhookService;
  snapshots: SnapshotService;
  rateLimiter: RateLimiter;
  adminToken: string | undefined;
  internalToken: string | undefined;
  bodyLimitBytes: number;
  /** A stream silent this long gets a `: keep-alive` comment. */
  sseKeepAliveMs: number;
  /** What /readyz asks (Postgres, Redis). */
  readiness: readonly ReadinessCheck[];
  /** Web origins whose pages may call `/v1` (CORS); none by default. */
  corsOrigins?: readonly string[];
}

/** One handler per documented operation: the compiler rejects a missing one. */
function operationHandlers(deps: AppDeps): { [N in OperationName]: HandlerOf<N> } {
  return {
    createSession: createSession(deps.sessions),
    listSessions: listSessions(deps.sessionStore, deps.sessions),
    getSession: getSession(deps.sessions),
    forkSession: forkSession(
      new ForkService(deps.sessionAccess, deps.sessionStore, deps.sessions, deps.logger),
    ),
    getEgress: getEgress(deps.sessionStore),
    setEgress: setEgress(deps.sessionStore, deps.sessionAccess),
    deleteSession: deleteSession(deps.sessions),
    execute: executeRoute(deps.execute, deps.processes, { keepAliveMs: deps.sseKeepAliveMs }),
    killProcesses: killProcesses(deps.processes),
    listProcesses: listProcesses(deps.processes),
    getProcess: getProcess(deps.processes),
    processOutput: processOutput(deps.processes, { keepAliveMs: deps.sseKeepAliveMs }),
    writeStdin: writeStdin(deps.processes),
    createTerminal: createTerminal(deps.terminals),
    createContext: createContext(deps.contexts),
    listContexts: listContexts(deps.contexts),
    deleteContext: deleteContext(deps.contexts),
    restartContext: restartContext(deps.contexts),
    writeFile: writeFile(deps.files),
    readFile: readFile(deps.files),
    listFiles: listFiles(deps.files),
    statFile: statFile(deps.files),
    watchFiles: watchFiles(deps.files, { keepAliveMs: deps.sseKeepAliveMs }),
    removeFile: removeFile(deps.files),
    renameFile: renameFile(deps.files),
    makeDirectory: makeDirectory(deps.files),
    createWebhook: createWebhook(deps.webhooks),
    listWebhooks: listWebhooks(deps.webhooks),
    deleteWebhook: deleteWebhook(deps.webhooks),
    createSnapshot: createSnapshot(deps.snapshots),
    listSnapshots: listSnapshots(deps.snapshots),
    getSnapshot: getSnapshot(deps.snapshots),
    deleteSnapshot: deleteSnapshot(deps.snapshots),
  };
}

/** Builds the gateway's HTTP app from its dependencies. No I/O happens here. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext(deps.logger));
  if (deps.metrics !== undefined) app.use(deps.metrics.middleware());
  // Bodies are parsed only after the caller is authenticated (and rate-limited), and never
  // decompressed: a compressed body is refused rather than inflated.
  const json = express.json({ limit: deps.bodyLimitBytes, type: () => true, inflate: false });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', readinessRoute(deps.readiness));

  app.use(
    '/admin/v1',
    tokenAuth(deps.adminToken, 'ADMIN_TOKEN'),
    json,
    adminRouter(deps.accounts),
    nodesRouter(deps.fleet),
  );
  app.put(
    '/internal/v1/nodes/:nodeId',
    tokenAuth(deps.internalToken, 'INTERNAL_TOKEN'),
    json,
    announceNode(deps.fleet),
  );
  app.get(
    '/internal/v1/previews/:sessionId',
    tokenAuth(deps.internalToken, 'INTERNAL_TOKEN'),
    resolvePreview(deps.sessionStore, deps.sessionAccess),
  );

  const openApiDocument = buildOpenApiDocument();
  app.get('/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });

  const handlers = operationHandlers(deps);
  // Authentication and rate limits guard each operation, so that a request reaching no
  // operation is 404 not_found (decisions.md), whoever sends it.
  const guard = [authenticateAndLimit(deps.accounts, deps.rateLimiter), json];
  const v1 = express.Router();
  for (const [name, op] of Object.entries(operations) as [OperationName, ApiOperation][]) {
    const scope = op.scope === undefined ? [] : [requireScope(op.scope)];
    v1[op.method](
      op.path,
      ...guard,
      ...scope,
      operationRoute(op, handlers[name], deps.idempotency),
    );
  }
  // The terminals' WebSocket is served by the upgrade handler (terminal-socket.ts); a plain
  // request there is told so, once its key is checked like any other.
  v1.get(
    '/sessions/:sessionId/terminals/:terminalId/connect',
    authenticate(deps.accounts),
    requireScope('execute'),
    () => {
      throw new AppError(
        'invalid_request',
        'A terminal opens with a WebSocket (Upgrade: websocket)',
      );
    },
  );
  const corsForPages = apiCors(deps.corsOrigins ?? []);
  if (corsForPages !== undefined) app.use('/v1', corsForPages);
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
