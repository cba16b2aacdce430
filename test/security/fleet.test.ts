import { call, createAccount } from '../support/api';
import { useStack } from '../support/use-stack';

/**
 * The fleet's operator endpoints (issue 12) against everyone but the operator: the node
 * registry answers the admin token only, an announcement the internal token only; a node
 * entry that names another node's address never receives a session (the heartbeat checks
 * who answers); metrics name routes, never ids or keys.
 */
const t = useStack({ gatewayEnv: { METRICS_PORT: '0', NODE_HEARTBEAT_MS: '200' } });

const ADMIN_CALLS: Array<[string, string, unknown?]> = [
  ['GET', '/admin/v1/nodes'],
  ['GET', '/admin/v1/nodes/any'],
  ['POST', '/admin/v1/nodes', { nodeId: 'evil', address: '127.0.0.1:1' }],
  ['POST', '/admin/v1/nodes/any/cordon'],
  ['POST', '/admin/v1/nodes/any/uncordon'],
  ['POST', '/admin/v1/nodes/any/drain'],
  ['DELETE', '/admin/v1/nodes/any'],
  ['DELETE', '/admin/v1/nodes/any?lost=true'],
];

it('answers the node registry to the admin token only', async () => {
  const tenant = await createAccount(t.stack, 'enterprise');
  for (const [method, path, body] of ADMIN_CALLS) {
    for (const key of [undefined, tenant.key, t.stack.internalToken, 'forged']) {
      const answer = await call(`${t.stack.url}${path}`, {
        method,
        ...(key === undefined ? {} : { key }),
        ...(body === undefined ? {} : { body }),
      });
      expect([method, path, answer.status]).toEqual([method, path, 401]);
    }
  }
  // Nothing was added.
  const nodes = await call<{ data: Array<{ nodeId: string }> }>(`${t.stack.url}/admin/v1/nodes`, {
    key: t.stack.adminToken,
  });
  expect(nodes.body.data.map((node) => node.nodeId)).toEqual([t.stack.nodeId]);
});

it('takes announcements with the internal token only', async () => {
  const tenant = await createAccount(t.stack, 'enterprise');
  for (const key of [undefined, tenant.key, t.stack.adminToken, 'forged']) {
    const answer = await call(`${t.stack.url}/internal/v1/nodes/${t.stack.nodeId}`, {
      method: 'PUT',
      ...(key === undefined ? {} : { key }),
      body: { address: '127.0.0.1:1', version: 'evil' },
    });
    expect(answer.status).toBe(401);
  }
  // The node's address is what it was.
  const node = await call<{ address: string }>(`${t.stack.url}/admin/v1/nodes/${t.stack.nodeId}`, {
    key: t.stack.adminToken,
  });
  expect(node.body.address).toBe(t.stack.agent.address);
});

it("gives no session to an entry that names another node's agent", async () => {
  const added = await call(`${t.stack.url}/admin/v1/nodes`, {
    method: 'POST',
    key: t.stack.adminToken,
    body: { nodeId: 'imposter', address: t.stack.agent.address },
  });
  expect(added.status).toBe(201);
  await t.stack.gateways[0]!.fleet.agents.tick();
  const view = await call<{ health: string }>(`${t.stack.url}/admin/v1/nodes/imposter`, {
    key: t.stack.adminToken,
  });
  // The agent there answers as its own node: the entry is down, never placed on.
  expect(view.body.health).toBe('down');
  const api = t.as((await createAccount(t.stack, 'paid')).key);
  for (let i = 0; i < 3; i += 1) {
    const id = await api.createSession();
    const { rows } = await t.stack.gateways[0]!.db.query<{ node_id: string }>(
      'SELECT node_id FROM sessions WHERE id = $1',
      [id],
    );
    expect(rows[0]?.node_id).toBe(t.stack.nodeId);
    await api.deleteSession(id);
  }
  await call(`${t.stack.url}/admin/v1/nodes/imposter`, {
    method: 'DELETE',
    key: t.stack.adminToken,
  });
});

it('writes no session id or key into the metrics', async () => {
  const account = await createAccount(t.stack, 'paid');
  const api = t.as(account.key);
  const id = await api.createSession();
  await api.execute(id, { command: 'true' });
  expect((await api.session(id)).status).toBe(200);
  const text = await (await fetch(`http://${t.stack.gateways[0]!.metricsAddress}/metrics`)).text();
  expect(text).toContain('route="/v1/sessions/:sessionId"');
  expect(text).not.toContain(id);
  expect(text).not.toContain(account.key);
  await api.deleteSession(id);
});
