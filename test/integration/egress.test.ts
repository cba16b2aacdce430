import { createAccount } from '../support/api';
import { LocalResolver } from '../support/local-resolver';
import { ApiClient } from '../support/api-client';
import { untilDeepSleep } from '../support/deep-sleep';
import { OUTSIDE_PORT, TRICKLE_PORT, useOutsideListeners } from '../support/outside-listeners';
import { useStack, useStackWithAccount, type AccountFixture } from '../support/use-stack';

/**
 * Egress policies per session (ADR 30), at create and at run time. "The internet" is two
 * listeners on this machine, at documentation addresses that no packet leaves for.
 */
const A = '203.0.113.10';
const B = '203.0.113.20';

useOutsideListeners([A, B]);

/** How the node's egress proxy resolves names here: a resolver on loopback that knows three. */
const resolver = new LocalResolver({
  'allowed.test': A,
  'api.allowed.test': A,
  'denied.test': B,
});
beforeAll(() => resolver.start());
afterAll(() => resolver.stop());
const withResolver = {
  // Read when the stack starts, after the resolver did.
  get SANDBOX_EGRESS_DNS() {
    return resolver.address;
  },
};

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** What a sandbox reaches of A and B, e.g. `A B` or `-`. */
const REACH = [A, B]
  .map(
    (address, i) =>
      `curl -s --max-time 2 http://${address}:${OUTSIDE_PORT}/ | grep -q '^reached ' && printf '${'AB'[i]} '`,
  )
  .join('; ');
/** Whether Docker's DNS answers in the sandbox (for its own container: nothing leaves). */
const DNS = (sessionId: string) =>
  `getent hosts sbx-${sessionId} >/dev/null && echo dns || echo no-dns`;

function useSessions(api: () => ApiClient) {
  const execute = async (sessionId: string, command: string) =>
    (await api().execute<Run>(sessionId, { command, timeout: 30 })).body;
  const reach = async (sessionId: string) =>
    (await execute(sessionId, `(${REACH}); echo`)).stdout.trim() || '-';
  const create = async (egress?: Record<string, unknown>) => {
    const created = await api().post<{ sessionId: string }>('/v1/sessions/create', {
      ...(egress === undefined ? {} : { egress }),
    });
    expect(created.status).toBe(200);
    return created.body.sessionId;
  };
  const put = (sessionId: string, egress: Record<string, unknown>) =>
    api().put<Record<string, unknown>>(`/v1/sessions/${sessionId}/egress`, egress);
  /** `reached <address>` of an HTTP(S) request by name, the name resolved as `--resolve` says. */
  const get = async (sessionId: string, url: string, resolveTo?: string) => {
    const { hostname, port, protocol } = new URL(url);
    const to =
      resolveTo === undefined
        ? ''
        : `--resolve ${hostname}:${port || (protocol === 'https:' ? 443 : 80)}:${resolveTo}`;
    const run = await execute(sessionId, `curl -sk --max-time 3 ${to} ${url} || echo refused`);
    return run.stdout.trim();
  };
  return { execute, reach, create, put, get };
}

type Sessions = ReturnType<typeof useSessions>;

// The policy cases and the domain rules need the same node (a resolver of test names): one stack.
describe('egress on a node with a resolver', () => {
  const t = useStackWithAccount('paid', { stack: { agentEnv: withResolver } });
  const sessions = useSessions(() => t.api);
  for (const register of [egressPolicies, egressPolicyChanges, domainRules, domainRuleChanges]) {
    register(t, sessions);
  }
});

function egressPolicies(t: AccountFixture, { execute, reach, create }: Sessions): void {
  describe('egress policies', () => {
    it('leaves the internet open by default, and says so', async () => {
      const id = await create();
      expect(await reach(id)).toBe('A B');
      expect((await execute(id, DNS(id))).stdout).toBe('dns\n');
      const policy = await t.api.get(`/v1/sessions/${id}/egress`);
      expect(policy.body).toEqual({ sessionId: id, default: 'allow', allow: [], deny: [] });
    });

    it('deny-all: nothing, not even DNS', async () => {
      const id = await create({ default: 'deny' });
      expect(await reach(id)).toBe('-');
      expect((await execute(id, DNS(id))).stdout).toBe('no-dns\n');
    });

    it('an allow list under deny, and a deny list under allow, by CIDR', async () => {
      const allowed = await create({ default: 'deny', allow: [`${A}/32`] });
      expect(await reach(allowed)).toBe('A');
      const denied = await create({ deny: ['203.0.113.16/28'] });
      expect(await reach(denied)).toBe('A');
      const policy = await t.api.get(`/v1/sessions/${denied}/egress`);
      expect(policy.body).toMatchObject({ default: 'allow', deny: ['203.0.113.16/28'] });
    });

    it('never opens what the node keeps closed (private ranges, this host)', async () => {
      const id = await create({ default: 'deny', allow: ['0.0.0.0/0'] });
      const run = await execute(id, `curl -s --max-time 2 http://169.254.169.254/ || echo blocked`);
      expect(run.stdout).toBe('blocked\n');
      expect(await reach(id)).toBe('A B');
    });
  });
}

function egressPolicyChanges(t: AccountFixture, { execute, reach, create, put }: Sessions): void {
  describe('egress policies at run time, refused, from the plan', () => {
    it('changes at run time, cutting a connection it now forbids', async () => {
      const id = await create();
      await execute(
        id,
        `nohup sh -c 'curl -sN http://${A}:${TRICKLE_PORT}/ > /tmp/trickle' >/dev/null 2>&1 &`,
      );
      const size = async () => Number((await execute(id, 'stat -c %s /tmp/trickle')).stdout.trim());
      let before = 0;
      for (let i = 0; i < 30 && before === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        before = await size();
      }
      expect(before).toBeGreaterThan(0);

      const changed = await put(id, { default: 'deny' });
      expect(changed.status).toBe(200);
      expect(changed.body).toEqual({ sessionId: id, default: 'deny', allow: [], deny: [] });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const cut = await size();
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(await size()).toBe(cut); // nothing arrives any more
      expect(await reach(id)).toBe('-');

      const reopened = await put(id, { allow: [], deny: [] });
      expect(reopened.body).toMatchObject({ default: 'allow' });
      expect(await reach(id)).toBe('A B');
      expect((await execute(id, DNS(id))).stdout).toBe('dns\n');
    });

    it('refuses a bad policy with the rule it could not read, changing nothing', async () => {
      const id = await create({ default: 'deny', allow: [`${A}/32`] });
      for (const [egress, field] of [
        [{ allow: ['not a rule'] }, 'egress.allow[0]'],
        [{ deny: ['10.0.0.0/33'] }, 'egress.deny[0]'],
        [{ default: 'maybe' }, 'default'],
        [{ allow: Array.from({ length: 65 }, (_, i) => `198.51.100.${i}`) }, 'allow'],
        [{ extra: true }, undefined],
      ] as const) {
        const refused = await put(id, egress);
        expect(refused.status).toBe(400);
        expect(refused.body).toMatchObject({ error: { code: 'invalid_request' } });
        if (field !== undefined) expect(JSON.stringify(refused.body)).toContain(field);
      }
      const created = await t.api.post('/v1/sessions/create', { egress: { deny: ['nope nope'] } });
      expect(created.status).toBe(400);
      expect(await reach(id)).toBe('A');
    });

    it("gives a session the plan's default when its create names none", async () => {
      const { key } = await createAccount(t.stack, 'enterprise', {
        limits: { egressDefault: 'deny' },
      });
      const api = new ApiClient(t.stack, key);
      const id = await api.createSession();
      expect((await api.get(`/v1/sessions/${id}/egress`)).body).toMatchObject({ default: 'deny' });
      const run = await api.execute<Run>(id, { command: `(${REACH}); echo`, timeout: 30 });
      expect(run.body.stdout.trim()).toBe('');
    });
  });
}

function domainRules(_t: AccountFixture, { execute, create, get }: Sessions): void {
  describe('domain rules', () => {
    it('lets through only the names an allow list gives, over HTTP and HTTPS', async () => {
      const id = await create({ default: 'deny', allow: ['allowed.test', '*.allowed.test'] });
      expect(await get(id, 'http://allowed.test/', A)).toBe(`reached ${A}`);
      expect(await get(id, 'https://api.allowed.test/', A)).toBe(`reached ${A}`);
      expect(await get(id, 'https://denied.test/', B)).toMatch(/^(refused|.*403.*|)$/);
      // The sandbox's DNS works for its own container, and for the names it allows, which the
      // node's DNS filter asks of the node's resolver: an app resolves a name before it
      // connects. Any other name is NXDOMAIN, and never asked outside (issue 40).
      expect((await execute(id, DNS(id))).stdout).toBe('dns\n');
      const leak = `leak-${id.slice(-8)}.example.org`;
      const names = await execute(
        id,
        `for name in api.allowed.test denied.test ${leak}; do getent hosts $name || echo "$name none"; done`,
      );
      expect(names.stdout.split('\n').map((line) => line.trim().split(/\s+/).join(' '))).toEqual([
        `${A} api.allowed.test`,
        'denied.test none',
        `${leak} none`,
        '',
      ]);
      expect(resolver.queries).toContain('api.allowed.test');
      expect(resolver.queries).not.toContain('denied.test');
      expect(resolver.queries).not.toContain(leak);
    });

    it('cannot be bypassed by resolving otherwise, by address, or by another port', async () => {
      const id = await create({ default: 'deny', allow: ['allowed.test'] });
      // allowed.test "resolved" to B's address: the proxy connects to what it resolves (A).
      expect(await get(id, 'https://allowed.test/', B)).toBe(`reached ${A}`);
      // By address: no name to allow.
      expect(await get(id, `https://${B}/`)).toBe('refused');
      expect(await get(id, `http://${A}/`)).not.toContain('reached');
      // Another port is the firewall's: the default, deny.
      expect(await get(id, `http://allowed.test:${OUTSIDE_PORT}/`, A)).toBe('refused');
      expect(resolver.queries).toContain('allowed.test');
    });

    it('refuses the names a deny list gives under allow, and what has no name', async () => {
      const id = await create({ deny: ['denied.test'] });
      // Its DNS answers every name but the denied ones, which it never asks outside.
      const names = await execute(
        id,
        'getent hosts allowed.test; getent hosts denied.test || echo none',
      );
      expect(names.stdout.split('\n').map((line) => line.trim().split(/\s+/).join(' '))).toEqual([
        `${A} allowed.test`,
        'none',
        '',
      ]);
      expect(resolver.queries).not.toContain('denied.test');
      expect(await get(id, 'https://allowed.test/', A)).toBe(`reached ${A}`);
      expect(await get(id, 'https://denied.test/', B)).toBe('refused');
      // denied.test under another name's SNI still reaches what that name resolves to, not B.
      expect(await get(id, 'https://allowed.test/', B)).toBe(`reached ${A}`);
      expect(await get(id, `https://${B}/`)).toBe('refused');
      // Other ports stay open under allow.
      expect(await get(id, `http://${B}:${OUTSIDE_PORT}/`)).toBe(`reached ${B}`);
    });
  });
}

function domainRuleChanges(_t: AccountFixture, { create, put, get }: Sessions): void {
  describe('domain rules at run time', () => {
    it('change at run time', async () => {
      const id = await create();
      expect(await get(id, 'https://denied.test/', B)).toBe(`reached ${B}`);
      expect((await put(id, { deny: ['*.denied.test', 'denied.test'] })).status).toBe(200);
      expect(await get(id, 'https://denied.test/', B)).toBe('refused');
      expect((await put(id, {})).status).toBe(200);
      expect(await get(id, 'https://denied.test/', B)).toBe(`reached ${B}`);
    });
  });
}

describe('an egress policy through deep sleep', () => {
  const t = useStack({
    gatewayEnv: {
      SESSION_IDLE_AFTER_S: '1',
      SESSION_DEEP_SLEEP_AFTER_S: '2',
      SESSION_SWEEP_INTERVAL_S: '1',
    },
  });
  let api: ApiClient | undefined;
  const client = () => {
    if (api === undefined) throw new Error('no account yet');
    return api;
  };
  const sessions = useSessions(client);

  beforeAll(async () => {
    api = new ApiClient(t.stack, (await createAccount(t.stack, 'paid')).key);
  });

  it('holds after a wake, and a change made while asleep applies at the wake', async () => {
    const id = await sessions.create({ default: 'deny', allow: [`${A}/32`] });
    expect(await sessions.reach(id)).toBe('A');
    await untilDeepSleep(client(), id);
    expect(await sessions.reach(id)).toBe('A'); // woken by this run, still held
    await untilDeepSleep(client(), id);
    const changed = await sessions.put(id, { default: 'deny', allow: [`${B}/32`] });
    expect(changed.status).toBe(200);
    expect(await sessions.reach(id)).toBe('B');
  });
});
