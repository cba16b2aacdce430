import express, { type Express } from 'express';
import type { Logger } from '@sandbox/logger';
import type { AccountStore } from './accounts/account-store';
import type { AgentPool } from './agents/agent-pool';
import { authenticate, requireScope } from './auth/authenticate';
import { tokenAuth } from './auth/token-auth';
import type { ExecuteService } from './execute/execute-service';
import { errorHandler, notFound } from './http/error-handler';
import { requestContext } from './http/request-context';
import type { IdempotencyOptions } from './idempotency/idempotent';
import { rateLimit } from './limits/rate-limit-middleware';
import type { RateLimiter } from './limits/rate-limiter';
import { adminRouter } from './routes/admin/accounts';
import { executeRoute } from './routes/execute/execute';
import { resolvePreview } from './routes/internal/resolve-preview';
import { createSession } from './routes/sessions/create-session';
import { deleteSession } from './routes/sessions/delete-session';
import { getSession } from './routes/sessions/get-session';
import { listSessions } from './routes/sessions/list-sessions';
import type { SessionService } from './sessions/session-service';
import type { SessionStore } from './sessions/session-store';

export interface AppDeps {
  logger: Logger;
  accounts: AccountStore;
  sessionStore: SessionStore;
  sessions: SessionService;
  idempotency: IdempotencyOptions;
  execute: ExecuteService;
  rateLimiter: RateLimiter;
  agents: AgentPool;
  adminToken: string | undefined;
  internalToken: string | undefined;
  bodyLimitBytes: number;
}

/** Builds the gateway's HTTP app from its dependencies. No I/O happens here. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext(deps.logger));
  app.use(express.json({ limit: deps.bodyLimitBytes, type: () => true }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.use('/admin/v1', tokenAuth(deps.adminToken, 'ADMIN_TOKEN'), adminRouter(deps.accounts));
  app.get(
    '/internal/v1/previews/:sessionId',
    tokenAuth(deps.internalToken, 'INTERNAL_TOKEN'),
    resolvePreview(deps.sessionStore, deps.agents),
  );

  const v1 = express.Router();
  v1.use(authenticate(deps.accounts), rateLimit(deps.rateLimiter));
  v1.post(
    '/sessions/create',
    requireScope('sessions'),
    createSession(deps.sessions, deps.idempotency),
  );
  v1.get('/sessions', requireScope('sessions'), listSessions(deps.sessionStore, deps.sessions));
  v1.get('/sessions/:sessionId', requireScope('sessions'), getSession(deps.sessions));
  v1.delete('/sessions/:sessionId', requireScope('sessions'), deleteSession(deps.sessions));
  v1.post('/execute', requireScope('execute'), executeRoute(deps.execute));
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
