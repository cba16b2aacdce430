import { ApiClient } from '../support/api-client';
import { createAccount } from '../support/api';
import { onGvisor } from '../support/stack';
import { useStack } from '../support/use-stack';

/**
 * Transitions at their deadline: the periodic sweep is an hour apart here, so only the
 * deadline timers of the two replicas can end, pause or put to sleep a session in time.
 */
const IDLE_MS = 2000;
const DEEP_SLEEP_MS = 4000;
/**
 * How late a transition may be seen: the deadline timer's lateness, plus this test's polling,
 * plus the transition's own work (a freeze; the workspace saved before `deep-sleep` shows),
 * which a loaded machine stretched past 1.5 s (2026-11-27); on gVisor, plus its slower freeze
 * (ADR 31). Far less than the periodic sweep's hour: only the deadline timers meet it. How late
 * the timers are is the benchmark's row (`BENCH_ONLY=deadlines`), not this test's.
 */
const LATE_MS = onGvisor ? 4000 : 3000;

const t = useStack({
  replicas: 2,
  gatewayEnv: {
    SESSION_IDLE_AFTER_S: String(IDLE_MS / 1000),
    SESSION_DEEP_SLEEP_AFTER_S: String(DEEP_SLEEP_MS / 1000),
    SESSION_SWEEP_INTERVAL_S: '3600',
  },
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** When `seen` first holds for the session's info on `api` (polled every 50 ms, 15 s at most). */
async function whenSeen(
  api: ApiClient,
  sessionId: string,
  seen: (status: number, state: string | undefined) => boolean,
): Promise<number> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const { status, body } = await api.session<{ state?: string }>(sessionId);
    if (seen(status, body.state)) return Date.now();
    await sleep(50);
  }
  throw new Error(`session ${sessionId} never reached the awaited state`);
}

describe('session transitions at their deadline (two replicas, no periodic sweep)', () => {
  it('pauses a session at its idle deadline and puts it to sleep at its deep-sleep deadline', async () => {
    const key = (await createAccount(t.stack, 'free')).key;
    const [a, b] = t.stack.gateways.map((g) => new ApiClient(g, key));
    // The replicas' first sweeps are over: they planned the next one from an empty table (an
    // hour away), so only the new session's own deadline can bring it sooner.
    await sleep(500);
    const sessionId = await a!.createSession();
    const lastRequest = Date.now();
    expect((await a!.execute(sessionId, { command: 'true' })).status).toBe(200);
    const idle = await whenSeen(b!, sessionId, (_status, state) => state === 'idle');
    expect(idle - lastRequest).toBeGreaterThanOrEqual(IDLE_MS - 50);
    expect(idle - lastRequest).toBeLessThanOrEqual(IDLE_MS + LATE_MS);
    const asleep = await whenSeen(b!, sessionId, (_status, state) => state === 'deep-sleep');
    expect(asleep - lastRequest).toBeGreaterThanOrEqual(DEEP_SLEEP_MS - 50);
    expect(asleep - lastRequest).toBeLessThanOrEqual(DEEP_SLEEP_MS + LATE_MS);
    // And back, on the next request.
    const woken = await b!.execute<{ stdout: string }>(sessionId, { command: 'echo back' });
    expect(woken.body.stdout).toBe('back\n');
  });

  it('ends a session within a second of its expiry, made on either replica', async () => {
    const key = (await createAccount(t.stack, 'free')).key;
    const [a, b] = t.stack.gateways.map((g) => new ApiClient(g, key));
    const created = await b!.post<{ sessionId: string; expiresAt: string }>('/v1/sessions/create', {
      ttl: 2,
    });
    expect(created.status).toBe(200);
    const { sessionId, expiresAt } = created.body;
    const ended = await whenSeen(a!, sessionId, (status) => status === 404);
    expect(ended).toBeGreaterThanOrEqual(Date.parse(expiresAt) - 50);
    expect(ended - Date.parse(expiresAt)).toBeLessThanOrEqual(LATE_MS);
  });
});
