// The stub agent of bench/gateway-stub.mjs: a gRPC server of the agent's service on loopback
// that keeps sessions as names only and answers every `Exec` as the agent answers a run that
// printed nothing and ended at once: its result (with its process), then the call's status
// (BENCH_GW_EVENTS=echo: as it answers `echo hi`, see ECHO).
// Prints its address on stdout once it listens. NODE_ID and INTERNAL_TOKEN from the bench.
import { createRequire } from 'node:module';
import { cpus, totalmem } from 'node:os';

const require = createRequire(import.meta.url);
const grpc = require('../services/gateway/node_modules/@grpc/grpc-js');
const { loadAgentProto } = require('../packages/proto/dist/index.js');

const nodeId = process.env.NODE_ID;
const token = process.env.INTERNAL_TOKEN;
const sandboxes = new Set();
let runs = 0;
/** How long a run takes (BENCH_GW_RUN_MS): the gateway then waits, as for a real run. */
const DELAY_MS = Number(process.env.BENCH_GW_RUN_MS ?? 0);
/**
 * BENCH_GW_EVENTS=echo: each run sends what the agent sends for `echo hi`, each message in a
 * turn of its own as a real run's come: `started` (its process), its output, then its result.
 * Unset: the result alone, as for a run that printed nothing and ended at once.
 */
const ECHO = process.env.BENCH_GW_EVENTS === 'echo';
const HI = Buffer.from('hi\n');

const authorized = (call) => call.metadata.get('authorization')[0] === `Bearer ${token}`;
const refusal = { code: grpc.status.UNAUTHENTICATED, details: 'Invalid agent token' };
const sandbox = (sessionId) => ({
  sessionId,
  containerId: sessionId,
  status: sandboxes.has(sessionId) ? 'running' : 'missing',
});
/** A unary handler that checks the token first. */
const unary = (answer) => (call, callback) => {
  if (!authorized(call)) callback(refusal);
  else callback(null, answer(call.request));
};

const service = loadAgentProto().agent.v1.Agent.service;
const server = new grpc.Server();
server.addService(service, {
  GetNodeInfo: unary(() => ({
    nodeId,
    version: 'stub',
    sandboxes: sandboxes.size,
    maxSandboxes: 100_000,
    memoryTotalBytes: totalmem(),
    memoryAvailableBytes: totalmem(),
    memoryReserveBytes: 0,
    cpus: cpus().length,
    loadAverage: 0,
    blobStore: `local:${nodeId}`,
    pool: [],
  })),
  CreateSandbox: unary((request) => {
    sandboxes.add(request.sessionId);
    return sandbox(request.sessionId);
  }),
  GetSandbox: unary((request) => sandbox(request.sessionId)),
  ResumeSandbox: unary((request) => sandbox(request.sessionId)),
  PauseSandbox: unary((request) => sandbox(request.sessionId)),
  DestroySandbox: unary((request) => ({ existed: sandboxes.delete(request.sessionId) })),
  Exec: (call) => {
    if (!authorized(call)) {
      call.emit('error', refusal);
      return;
    }
    runs += 1;
    const ref = { id: `proc_${runs}`, pid: 1000 + (runs % 30_000) };
    const answer = () => {
      call.write({
        result: {
          exitCode: 0,
          executionTimeMs: 1,
          memoryUsedBytes: 1 << 20,
          cpuTimeMs: 0,
          timedOut: false,
          filesWritten: [],
          limitsExceeded: [],
          process: ref,
        },
      });
      call.end();
    };
    if (ECHO) {
      call.write({ started: { process: ref } });
      setImmediate(() => {
        call.write({ stdout: { data: HI, at: { stdout: HI.length, stderr: 0 }, process: ref } });
        if (DELAY_MS > 0) setTimeout(answer, DELAY_MS);
        else setImmediate(answer);
      });
      return;
    }
    if (DELAY_MS > 0) setTimeout(answer, DELAY_MS);
    else answer();
  },
});
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`127.0.0.1:${port}\n`);
});
