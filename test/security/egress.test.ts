import { createAccount } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { useStackWithStranger } from '../support/use-stack';

/**
 * Egress policies (ADR 30) against another account and against abuse: nobody but the
 * session's account reads or changes its policy (another account's session answers as a
 * missing one, and keeps its policy); a key without the sessions scope gets nowhere; what is
 * not a rule, or too many of them, is refused whole; and the sandbox cannot loosen its own
 * rules from inside.
 */
const t = useStackWithStranger();
let executeOnly: ApiClient;

beforeAll(async () => {
  executeOnly = t.as((await createAccount(t.stack, 'paid', { scopes: ['execute'] })).key);
});

const path = (sessionId: string) => `/v1/sessions/${sessionId}/egress`;

it("refuses another account, and a key without the sessions scope, a session's policy", async () => {
  const created = await t.mine.post<{ sessionId: string }>('/v1/sessions/create', {
    egress: { default: 'deny' },
  });
  const sessionId = created.body.sessionId;
  for (const response of [
    await t.theirs.get(path(sessionId)),
    await t.theirs.put(path(sessionId), {}),
  ]) {
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ error: { code: 'session_not_found' } });
  }
  expect((await executeOnly.put(path(sessionId), {})).status).toBe(403);
  expect((await t.mine.get(path(sessionId))).body).toMatchObject({ default: 'deny' });
  // A missing session answers as another account's.
  expect((await t.mine.put(path('ses_00000000000000000000000000'), {})).status).toBe(404);
});

it('refuses what is not a policy, whole, and keeps the one in force', async () => {
  const sessionId = await t.mine.createSession();
  await t.mine.put(path(sessionId), { default: 'deny', allow: ['203.0.113.0/24'] });
  const refused = [
    { allow: Array.from({ length: 65 }, (_, i) => `198.51.100.${i}`) },
    { deny: ['x'.repeat(300)] },
    { deny: [42] },
    { allow: 'all' },
    { default: 'ALLOW' },
    { default: 'allow', extra: 1 },
    { allow: ['0.0.0.0/0', '10.0.0.0/8 ', '1.2.3.4/-1'] },
    { allow: ['203.0.113.0/24\n-A INPUT -j ACCEPT'] },
    [],
  ];
  for (const body of refused) {
    const response = await t.mine.put(path(sessionId), body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: 'invalid_request' } });
  }
  expect((await t.mine.get(path(sessionId))).body).toMatchObject({
    default: 'deny',
    allow: ['203.0.113.0/24'],
  });
});

it('cannot be loosened from inside the sandbox', async () => {
  const created = await t.mine.post<{ sessionId: string }>('/v1/sessions/create', {
    egress: { default: 'deny' },
  });
  const attempt = (command: string) => `(${command}) >/dev/null 2>&1 && echo ok || echo refused`;
  const run = await t.mine.execute<{ stdout: string }>(created.body.sessionId, {
    command: [
      attempt('iptables -F'),
      attempt('nft flush ruleset'),
      attempt('ip addr add 172.31.255.9/32 dev eth0'),
      attempt('ip route replace default via 172.31.255.1'),
      attempt('echo 0 > /proc/sys/net/ipv4/conf/all/rp_filter'),
    ].join('; '),
  });
  expect(run.body.stdout).toBe('refused\n'.repeat(5));
});
