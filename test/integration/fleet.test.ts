import { previewLabelOf } from '@sandbox/contract';
import { runCli } from '@sandbox/sandboxctl';
import { call, createAccountAt } from '../support/api';
import { ApiClient } from '../support/api-client';
import { FINGERPRINT } from '../support/deep-sleep';
import { startFleet, type FleetNode, type TestFleet } from '../support/fleet';
import { closedPort } from '../support/net';
import { previewRequest } from '../support/preview-app';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { parseEvents, StreamedRun } from '../support/streamed-run';

/**
 * The fleet (issue 12) on real parts: two agents on one Docker engine, each its own node, that
 * announce themselves to two gateway replicas; workspaces of sleeping sessions in one S3 store.
 * Placement by load, cordon, a node that stops and comes back, drain, and a wake elsewhere.
 */
let fleet: TestFleet;
let api: ApiClient;
let a: FleetNode;
let b: FleetNode;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface NodeView {
  nodeId: string;
  state: string;
  source: string;
  health: string;
  sessions: number;
  unmoved: number;
  capacity: { maxSandboxes: number } | null;
  load: { sandboxes: number } | null;
  blobStore: string | null;
  drainable: boolean;
}

function admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
  return call<T>(`${fleet.url}/admin/v1${path}`, {
    method,
    key: fleet.adminToken,
    ...(body === undefined ? {} : { body }),
  });
}

async function nodeView(nodeId: string): Promise<NodeView> {
  return (await admin<NodeView>('GET', `/nodes/${nodeId}`)).body;
}

/** Polls until `check` holds (throws after `ms`). */
async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

/** Waits (with heartbeats on every replica) until `node` is `health`. */
function untilHealth(node: FleetNode, health: 'up' | 'down'): Promise<void> {
  return until(`${node.nodeId} ${health}`, async () => {
    await fleet.tick();
    return (await nodeView(node.nodeId)).health === health;
  });
}

async function nodeOf(sessionId: string): Promise<string> {
  const { rows } = await fleet.gateways[0]!.db.query<{ node_id: string }>(
    'SELECT node_id FROM sessions WHERE id = $1',
    [sessionId],
  );
  return rows[0]?.node_id ?? '';
}

/** A session placed on `node` (the others cordoned while it is made). */
async function sessionOn(node: FleetNode): Promise<string> {
  const others = fleet.nodes.filter((other) => other !== node);
  for (const other of others) await admin('POST', `/nodes/${other.nodeId}/cordon`);
  try {
    const id = await api.createSession();
    expect(await nodeOf(id)).toBe(node.nodeId);
    return id;
  } finally {
    for (const other of others) await admin('POST', `/nodes/${other.nodeId}/uncordon`);
    await fleet.tick();
  }
}

beforeAll(async () => {
  fleet = await startFleet({
    gatewayEnv: {
      SESSION_SWEEP_INTERVAL_S: '3600',
      SESSION_SWEEP_AT_DEADLINES: 'false',
      SESSION_IDLE_AFTER_S: '2',
      SESSION_DEEP_SLEEP_AFTER_S: '3',
    },
  });
  [a, b] = fleet.nodes as [FleetNode, FleetNode];
  // Both announced themselves to the first replica; every replica reads the registry.
  await until('both nodes up on every replica', async () => {
    await fleet.tick();
    const { body } = await admin<{ data: NodeView[] }>('GET', '/nodes');
    return body.data.filter((node) => node.health === 'up').length === 2;
  });
  api = new ApiClient(fleet, (await createAccountAt(fleet, 'paid')).key);
}, 120_000);

afterAll(async () => {
  await fleet?.stop();
});

it('lists the nodes that announced themselves, with health, capacity, load and their store', async () => {
  const { status, body } = await admin<{ data: NodeView[] }>('GET', '/nodes');
  expect(status).toBe(200);
  expect(body.data.map((node) => node.nodeId).sort()).toEqual([a.nodeId, b.nodeId].sort());
  for (const node of body.data) {
    expect(node).toMatchObject({
      state: 'active',
      source: 'agent',
      health: 'up',
      capacity: { maxSandboxes: 10 },
      drainable: true,
    });
    expect(node.blobStore).toMatch(/^s3:\/\/127\.0\.0\.1:\d+\/fleet-workspaces\//);
  }
  // The other replica sees the same nodes, up.
  const other = await call<{ data: NodeView[] }>(`${fleet.gateways[1]!.url}/admin/v1/nodes`, {
    key: fleet.adminToken,
  });
  expect(other.body.data.filter((node) => node.health === 'up')).toHaveLength(2);

  // sandboxctl speaks the same API.
  let out = '';
  const code = await runCli(
    ['--url', fleet.url, 'nodes', 'get', a.nodeId],
    { adminUrl: fleet.url, adminToken: fleet.adminToken },
    { out: (text) => (out += text), err: () => undefined },
  );
  expect(code).toBe(0);
  expect(JSON.parse(out)).toMatchObject({ nodeId: a.nodeId, health: 'up' });
});

it('refuses an announcement without the internal token, and bad node ids and addresses', async () => {
  const announce = (token: string | undefined, id: string, body: unknown) =>
    call(`${fleet.url}/internal/v1/nodes/${id}`, {
      method: 'PUT',
      ...(token === undefined ? {} : { key: token }),
      body,
    });
  const good = { address: '127.0.0.1:1', version: 'x' };
  expect((await announce(undefined, 'intruder', good)).status).toBe(401);
  expect((await announce(fleet.adminToken, 'intruder', good)).status).toBe(401);
  expect((await announce(fleet.internalToken, 'Bad_Id', good)).status).toBe(400);
  expect(
    (await announce(fleet.internalToken, 'intruder', { address: 'http://x', version: 'x' })).status,
  ).toBe(400);
  expect((await admin('GET', '/nodes/intruder')).status).toBe(404);
});

it('places new sessions by load and never on a cordoned node', async () => {
  await admin('POST', `/nodes/${b.nodeId}/cordon`);
  expect(await nodeView(b.nodeId)).toMatchObject({ state: 'cordoned' });
  const onA = [await api.createSession(), await api.createSession()];
  for (const id of onA) expect(await nodeOf(id)).toBe(a.nodeId);
  await admin('POST', `/nodes/${b.nodeId}/uncordon`);
  await fleet.tick();
  // a holds two sandboxes, b none: the next two go to b.
  const next = [await api.createSession(), await api.createSession()];
  for (const id of next) expect(await nodeOf(id)).toBe(b.nodeId);
  for (const id of [...onA, ...next]) await api.deleteSession(id);
});

it('gives a stopped node no new session, answers 503 for its sessions, and serves them again once it is back', async () => {
  const id = await sessionOn(b);
  await api.writeFile(id, 'kept.txt', 'still here');
  // A node holding a session that cannot wake elsewhere is not removed.
  const refused = await admin('DELETE', `/nodes/${b.nodeId}`);
  expect(refused.status).toBe(409);
  expect(refused.body).toMatchObject({ error: { code: 'conflict' } });

  await b.stop();
  await untilHealth(b, 'down');
  const during = await api.execute(id, { command: 'cat kept.txt' });
  expect(during.status).toBe(503);
  expect(during.body).toMatchObject({ error: { code: 'service_unavailable' } });
  expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
  const created = await api.createSession();
  expect(await nodeOf(created)).toBe(a.nodeId);

  await b.start();
  await untilHealth(b, 'up');
  const after = await api.execute<{ stdout: string }>(id, { command: 'cat kept.txt' });
  expect(after.status).toBe(200);
  expect(after.body.stdout).toBe('still here');
  for (const session of [id, created]) await api.deleteSession(session);
}, 60_000);

it('drains a node: every session moves with every byte, its runs end with a clear event', async () => {
  const ids = [await sessionOn(b), await sessionOn(b)];
  const fingerprints: string[] = [];
  for (const id of ids) {
    const filled = await api.execute(id, {
      command:
        'head -c 3000000 /dev/urandom > random.bin && mkdir -p d && for i in $(seq 1 50); do echo $i > d/f$i; done && ln -s random.bin link',
    });
    expect(filled.body).toMatchObject({ exitCode: 0 });
    fingerprints.push(
      (await api.execute<{ stdout: string }>(id, { command: FINGERPRINT })).body.stdout,
    );
  }
  // A run under way when the drain comes.
  const run = new StreamedRun(
    await api.executeStream(ids[0]!, { command: 'echo started; sleep 60', timeout: 120 }),
  );
  await run.untilStdout('started');

  const drained = await admin<NodeView>('POST', `/nodes/${b.nodeId}/drain`);
  expect(drained.status).toBe(200);
  expect(drained.body).toMatchObject({ state: 'draining' });
  // The run ends as its session leaves the node.
  const events = parseEvents(await run.rest());
  expect(events.at(-1)).toMatchObject({
    event: 'error',
    data: { code: 'service_unavailable', details: { reason: 'session_moved' } },
  });
  expect(events.at(-1)?.data.message).toMatch(/moving to another node/);

  await until('b drained', async () => (await nodeView(b.nodeId)).unmoved === 0, 60_000);
  // No new session lands on a draining node.
  const fresh = await api.createSession();
  expect(await nodeOf(fresh)).toBe(a.nodeId);
  // The second wakes on a through a preview visit (nothing listens there after the move: the
  // edge's page says so), the first at its next request; every byte is there.
  const visit = await previewRequest(fleet.edge.url, `${previewLabelOf(ids[1]!)}.preview.test`);
  expect(visit.status).toBe(502);
  expect(await nodeOf(ids[1]!)).toBe(a.nodeId);
  for (const [i, id] of ids.entries()) {
    const print = await api.execute<{ stdout: string }>(id, { command: FINGERPRINT });
    expect(print.status).toBe(200);
    expect(print.body.stdout).toBe(fingerprints[i]);
    expect(await nodeOf(id)).toBe(a.nodeId);
  }
  // The runs' kept output moved with the session: the runs before the drain are listed on a,
  // the one the drain ended as lost, and their output reads back.
  const listed = await api.get<{ processes: Array<Record<string, unknown>> }>(
    `/v1/sessions/${ids[0]}/processes`,
  );
  const runs = listed.body.processes;
  expect(runs.map((run) => run.state)).toEqual(['exited', 'exited', 'lost', 'exited']);
  expect(runs[2]).toMatchObject({ command: 'echo started; sleep 60' });
  const before = await api.get<{ stdout: string }>(
    `/v1/sessions/${ids[0]}/processes/${String(runs[1]?.id)}/output`,
  );
  expect(before.body.stdout).toBe(fingerprints[0]);
  // Drained, it can go: stopped, then removed from the registry.
  await b.stop();
  expect((await admin('DELETE', `/nodes/${b.nodeId}`)).status).toBe(204);
  expect((await admin('GET', `/nodes/${b.nodeId}`)).status).toBe(404);
  // Back, it announces itself again: a new, active node.
  await b.start();
  await until('b joined again', async () => {
    await fleet.tick();
    const view = await admin<NodeView>('GET', `/nodes/${b.nodeId}`);
    return view.status === 200 && view.body.health === 'up' && view.body.state === 'active';
  });
  for (const id of [...ids, fresh]) await api.deleteSession(id);
}, 120_000);

it('refuses to drain a node whose sessions could not wake elsewhere', async () => {
  const added = await admin<NodeView>('POST', '/nodes', {
    nodeId: 'never-seen',
    address: `127.0.0.1:${await closedPort()}`,
  });
  expect(added.status).toBe(201);
  expect(added.body).toMatchObject({ source: 'operator', drainable: false });
  expect(
    (await admin('POST', '/nodes', { nodeId: 'never-seen', address: '127.0.0.1:1' })).status,
  ).toBe(409);
  const drain = await admin('POST', '/nodes/never-seen/drain');
  expect(drain.status).toBe(409);
  expect(drain.body).toMatchObject({ error: { code: 'conflict' } });
  expect((await admin('DELETE', '/nodes/never-seen')).status).toBe(204);
});

it('wakes a deep-sleeping session on another node through S3 when its own is down', async () => {
  const id = await sessionOn(a);
  await api.writeFile(id, 'note.txt', 'from a');
  await sleep(3500);
  expect((await fleet.gateways[0]!.sweeper.sweep()).slept).toContain(id);
  await a.stop();
  await untilHealth(a, 'down');
  const read = await api.execute<{ stdout: string }>(id, { command: 'cat note.txt' });
  expect(read.status).toBe(200);
  expect(read.body.stdout).toBe('from a');
  expect(await nodeOf(id)).toBe(b.nodeId);
  await a.start();
  await api.deleteSession(id);
}, 60_000);

it("starts a session from an S3 snapshot on another node while the snapshot's own is down", async () => {
  const id = await sessionOn(a);
  await api.writeFile(id, 'snap.txt', 'taken on a');
  const taken = await api.post<{ snapshotId: string }>(`/v1/sessions/${id}/snapshots`, {});
  expect(taken.status).toBe(201);
  const { snapshotId } = taken.body;
  await a.stop();
  await untilHealth(a, 'down');
  const copy = await api.createSession({ snapshotId });
  expect(await nodeOf(copy)).toBe(b.nodeId);
  const read = await api.execute<{ stdout: string }>(copy, { command: 'cat snap.txt' });
  expect(read.body.stdout).toBe('taken on a');
  // Its blob goes through a node that reaches the bucket: nothing is left to remove.
  expect((await api.delete(`/v1/snapshots/${snapshotId}`)).status).toBe(200);
  const { rows } = await fleet.gateways[0]!.db.query('SELECT * FROM snapshot_blob_removals');
  expect(rows).toEqual([]);
  await a.start();
  await untilHealth(a, 'up');
  for (const session of [id, copy]) await api.deleteSession(session);
}, 60_000);

it('forgets a node lost for good: its sleepers wake elsewhere, its other sessions end with session.lost', async () => {
  const receiver = await startWebhookReceiver();
  const hook = await api.post('/v1/webhooks', { url: receiver.url, events: ['session.lost'] });
  expect(hook.status).toBe(201);
  // Another account hears nothing of it.
  const strangers = await startWebhookReceiver();
  const stranger = new ApiClient(fleet, (await createAccountAt(fleet, 'paid')).key);
  await stranger.post('/v1/webhooks', { url: strangers.url, events: ['session.lost'] });
  const sleeper = await sessionOn(b);
  await api.writeFile(sleeper, 'note.txt', 'asleep on b');
  await sleep(3500);
  expect((await fleet.gateways[0]!.sweeper.sweep()).slept).toContain(sleeper);
  const active = await sessionOn(b);
  // Not while its heartbeat answers.
  const refused = await admin('DELETE', `/nodes/${b.nodeId}?lost=true`);
  expect(refused.status).toBe(409);

  await b.stop();
  await untilHealth(b, 'down');
  const forgotten = await admin<{ lostSessions: string[] }>(
    'DELETE',
    `/nodes/${b.nodeId}?lost=true`,
  );
  expect(forgotten.status).toBe(200);
  expect(forgotten.body.lostSessions).toEqual([active]);
  // The lost one is gone, and says why.
  const gone = await api.execute(active, { command: 'true' });
  expect(gone.status).toBe(404);
  expect(gone.body).toMatchObject({
    error: { code: 'session_not_found', details: { reason: 'node_lost' } },
  });
  await receiver.waitFor((received) => received.length === 1);
  expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({
    type: 'session.lost',
    data: { sessionId: active, nodeId: b.nodeId },
  });
  // The sleeper wakes on a, every byte there.
  const read = await api.execute<{ stdout: string }>(sleeper, { command: 'cat note.txt' });
  expect(read.body.stdout).toBe('asleep on b');
  expect(await nodeOf(sleeper)).toBe(a.nodeId);

  // b comes back after all: it joins again, and the lost session's sandbox is removed there.
  await b.start();
  await until('b joined again', async () => {
    await fleet.tick();
    const view = await admin<NodeView>('GET', `/nodes/${b.nodeId}`);
    return view.status === 200 && view.body.health === 'up';
  });
  await fleet.gateways[0]!.sweeper.sweep();
  const { rows } = await fleet.gateways[0]!.db.query<{ destroyed: boolean }>(
    'SELECT destroyed_at IS NOT NULL AS destroyed FROM sessions WHERE id = $1',
    [active],
  );
  expect(rows[0]?.destroyed).toBe(true);
  expect(strangers.received).toEqual([]);
  await api.deleteSession(sleeper);
  await receiver.close();
  await strangers.close();
}, 90_000);
