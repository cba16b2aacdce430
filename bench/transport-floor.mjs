// The transports of bench/gateway-stub.mjs without the gateway: what its rows would cost if the
// gateway did nothing but carry a run. Each is served in the bench's process, as the gateway
// is, with the same HTTP client and the same stub agent, so that its CPU per run compares
// with the gateway's (this process's CPU: the server and the client; the stub's is apart).
// - `http`: a bare node:http keep-alive server that reads the body, parses it and answers a
//   JSON result of the same shape (no Redis, no gRPC).
// - `grpc`: the agent's `Exec` called on the stub with grpc-js as the gateway calls it (its
//   generated client, the token in the metadata, a deadline), up to the run's result.
// - `http+grpc`: the two in one: the bare server calls `Exec` for each request and answers
//   with its result: the least an HTTP-in, gRPC-out hop costs here.
import http from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const grpc = require('../services/gateway/node_modules/@grpc/grpc-js');
const { loadAgentProto } = require('../packages/proto/dist/index.js');

/** A stub agent's `Exec` from this process: resolves with the run's result message. */
export function stubExec(address, token) {
  const Agent = loadAgentProto().agent.v1.Agent;
  const client = new Agent(address, grpc.credentials.createInsecure());
  const exec = (sessionId, command) =>
    new Promise((resolve, reject) => {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${token}`);
      const call = client.exec({ sessionId, command, timeoutMs: 30_000 }, metadata, {
        deadline: new Date(Date.now() + 60_000),
      });
      call.on('data', (event) => {
        if (event.result) resolve(event.result);
      });
      call.on('error', reject);
      call.on('end', () => reject(new Error('Exec ended without a result')));
    });
  return { exec, close: () => client.close() };
}

/**
 * A bare node:http server on loopback answering every POST with a run's result, that of
 * `run(body)` when given; resolves with its URL and a stop.
 */
export async function bareServer(run) {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const result = run === undefined ? { exitCode: 0 } : await run(body);
      const text = JSON.stringify({
        stdout: '',
        stderr: '',
        exitCode: result.exitCode,
        executionTime: 1,
        memoryUsed: 1 << 20,
        cpuTime: 0,
        timedOut: false,
        filesWritten: [],
      });
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}
