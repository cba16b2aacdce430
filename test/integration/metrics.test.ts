import { Writable } from 'node:stream';
import { createLogger } from '@sandbox/logger';
import { createAccount } from '../support/api';
import { ApiClient } from '../support/api-client';
import { previewRequest } from '../support/preview-app';
import { useStack } from '../support/use-stack';

/**
 * Observability (issue 12): Prometheus `/metrics` on gateway, agent and edge proxy, each on a
 * listener of its own (the agent's behind a token here); and a request id carried from the
 * HTTP request through gRPC into the agent's log lines.
 */
const lines: Array<Record<string, unknown>> = [];
const capture = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n')) {
      if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  },
});
const METRICS_TOKEN = 'metrics-token-for-this-test';
const t = useStack({
  gatewayEnv: { METRICS_PORT: '0' },
  agentEnv: { METRICS_PORT: '0', METRICS_TOKEN },
  edge: true,
  edgeEnv: { METRICS_PORT: '0' },
  // Debug: the agent's line per run ('run ended') is a debug line.
  logger: createLogger({ name: 'test', level: 'debug', destination: capture }),
});

async function scrape(address: string | undefined, token?: string): Promise<string> {
  const response = await fetch(`http://${address}/metrics`, {
    ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return response.text();
}

/** The value of the sample `name{labels}` (labels as written, in order); undefined if absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

let api: ApiClient;
let sessionId: string;

beforeAll(async () => {
  api = new ApiClient(t.stack, (await createAccount(t.stack, 'paid')).key);
  sessionId = await api.createSession();
  const run = await api.post(
    '/v1/execute',
    { sessionId, command: 'echo hi' },
    {
      'x-request-id': 'trace-metrics-1',
    },
  );
  expect(run.status).toBe(200);
});

it("serves the gateway's metrics: requests by route and status, sessions, nodes, webhooks", async () => {
  const text = await scrape(t.stack.gateways[0]!.metricsAddress);
  expect(
    sample(text, 'gateway_http_requests_total{method="POST",route="/v1/execute",status="200"}'),
  ).toBe(1);
  expect(
    sample(
      text,
      'gateway_http_requests_total{method="POST",route="/v1/sessions/create",status="200"}',
    ),
  ).toBe(1);
  expect(text).toMatch(
    /gateway_http_request_duration_seconds_count\{method="POST",route="\/v1\/execute"\} 1/,
  );
  expect(sample(text, 'gateway_sessions{state="active"}')).toBe(1);
  expect(sample(text, `gateway_node_up{node="${t.stack.nodeId}",state="active"}`)).toBe(1);
  expect(sample(text, `gateway_node_max_sandboxes{node="${t.stack.nodeId}"}`)).toBeGreaterThan(0);
  expect(sample(text, 'gateway_webhook_backlog')).toBe(0);
  expect(text).toContain('process_cpu_seconds_total');
  // A wrong path is 404, and the public port serves no metrics.
  expect((await fetch(`http://${t.stack.gateways[0]!.metricsAddress}/other`)).status).toBe(404);
  expect((await fetch(`${t.stack.url}/metrics`)).status).toBe(404);
});

it("serves the agent's metrics behind its token: calls by method and status, sandboxes, pool", async () => {
  const address = t.stack.agent.metricsAddress;
  expect((await fetch(`http://${address}/metrics`)).status).toBe(401);
  const wrong = await fetch(`http://${address}/metrics`, {
    headers: { authorization: 'Bearer nope' },
  });
  expect(wrong.status).toBe(401);
  const text = await scrape(address, METRICS_TOKEN);
  expect(sample(text, 'agent_grpc_calls_total{method="Exec",code="OK"}')).toBe(1);
  expect(sample(text, 'agent_grpc_calls_total{method="CreateSandbox",code="OK"}')).toBe(1);
  expect(text).toMatch(/agent_grpc_call_duration_seconds_count\{method="Exec"\} 1/);
  expect(sample(text, 'agent_sandboxes')).toBeGreaterThanOrEqual(1);
  expect(sample(text, 'agent_pool_ready{shape="1024:0.25:1024"}')).toBeGreaterThanOrEqual(0);
  // The test stack's pool keeps its one member (test/support/stack.ts).
  expect(sample(text, 'agent_pool_target{shape="1024:0.25:1024"}')).toBe(1);
  // The one create of this file: served by the pool, or not.
  const hits = sample(text, 'agent_pool_claims_total{shape="1024:0.25:1024",result="hit"}');
  const misses = sample(text, 'agent_pool_claims_total{shape="1024:0.25:1024",result="miss"}');
  expect((hits ?? 0) + (misses ?? 0)).toBe(1);
  expect(sample(text, 'agent_pool_members_made_total')).toBeGreaterThanOrEqual(1);
  expect(sample(text, 'agent_cold_starts{state="queued"}')).toBe(0);
  expect(sample(text, 'agent_cold_starts_refused_total')).toBe(0);
  expect(sample(text, 'agent_memory_available_bytes')).toBeGreaterThan(0);
  // The engine watch probes dockerd (a network inspect): it answered.
  expect(sample(text, 'agent_docker_engine_wedged')).toBe(0);
  expect(sample(text, 'agent_docker_engine_probe_seconds')).toBeGreaterThanOrEqual(0);
});

it("serves the edge proxy's metrics: preview requests by status", async () => {
  const edge = t.stack.edge!;
  const page = await previewRequest(edge.url, 'ses-abcdefghijklmnopqrstuvwx.preview.test');
  const text = await scrape(edge.metricsAddress);
  expect(sample(text, `edge_http_requests_total{status="${page.status}"}`)).toBe(1);
  expect(text).toContain('edge_http_request_duration_seconds_count 1');
});

it("carries the request id from the HTTP request through gRPC into the agent's log lines", () => {
  const gatewayLine = lines.find(
    (line) => line.msg === 'request' && line.requestId === 'trace-metrics-1',
  );
  expect(gatewayLine).toMatchObject({ path: '/v1/execute', status: 200 });
  // The agent logs the run it served under the same id.
  const agentLine = lines.find((line) => line.msg === 'run ended' && line.sessionId === sessionId);
  expect(agentLine).toMatchObject({ requestId: 'trace-metrics-1', exitCode: 0 });
});

it('answers the edge proxy probes on its own host, never on a preview host', async () => {
  const edge = t.stack.edge!;
  const healthz = await fetch(`${edge.url}/healthz`);
  expect(healthz.status).toBe(200);
  expect(await healthz.json()).toEqual({ status: 'ok' });
  expect((await fetch(`${edge.url}/readyz`)).status).toBe(200);
  // On a preview host the path is the app's: it goes to the session (here: none).
  const preview = await previewRequest(
    edge.url,
    'ses-abcdefghijklmnopqrstuvwx.preview.test',
    '/healthz',
  );
  expect(preview.status).toBe(404);
  expect(preview.type).toMatch(/^text\/html/);
});
