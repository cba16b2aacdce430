import type { Request, Response } from 'express';

/** One dependency a gateway needs to serve requests, and how to ask it. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<unknown>;
}

/** How long each dependency gets to answer. */
const CHECK_TIMEOUT_MS = 1000;

function withinTimeout(work: Promise<unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
    work.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

/**
 * GET /readyz: 200 when every dependency (Postgres, Redis) answers within a second, else 503
 * naming the ones that did not (no error detail: probes are unauthenticated).
 */
export function readinessRoute(checks: readonly ReadinessCheck[]) {
  return async (_req: Request, res: Response): Promise<void> => {
    const results = await Promise.all(
      checks.map(async ({ name, check }) => [name, await withinTimeout(check())] as const),
    );
    const ready = results.every(([, ok]) => ok);
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : 'not_ready',
      checks: Object.fromEntries(results.map(([name, ok]) => [name, ok ? 'ok' : 'unavailable'])),
    });
  };
}
