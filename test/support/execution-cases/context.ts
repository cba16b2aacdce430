import type { AccountFixture } from '../use-stack';

/** POST /v1/execute in the fixture's session (or `id`), as the fixture's account. */
export const executeIn =
  (t: AccountFixture) =>
  (body: Record<string, unknown>, id = t.sessionId) =>
    t.api.execute(id, body);
