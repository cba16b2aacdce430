import * as grpc from '@grpc/grpc-js';
import { bearer, INTERNAL_TOKEN_METADATA_KEY, REQUEST_ID_METADATA_KEY } from '@sandbox/contract';
import { fromGrpcError, isConnectionFailure } from '@sandbox/errors';
import { currentRequestId } from '@sandbox/logger';
import { loadAgentProto, type AgentClient as GrpcAgentClient } from '@sandbox/proto';

// How calls reach one agent: its channel, each call's metadata, a unary call as a promise, and
// an idempotent call that outlives a lost connection.

/**
 * How long a wake cut short by the node's connection waits for the node to answer again (an
 * agent restarted by its supervisor is back within seconds) before it fails with 503.
 */
const RECONNECT_WAIT_MS = 15_000;

/** One unary call of the agent's client, given its metadata, options and callback. */
export type UnaryCall<Res> = (
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/** The gRPC client of the agent at `address`. */
export function connectAgent(address: string): GrpcAgentClient {
  const Agent = loadAgentProto().agent.v1.Agent;
  return new Agent(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 128 * 1024 * 1024,
    'grpc.keepalive_time_ms': 30_000,
    // A node back from an outage is reached within a second (grpc-js would otherwise back
    // off up to two minutes between attempts): its heartbeat and its requests resume.
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 1000,
  });
}

/** The token, and the id of the request this call serves (the agent logs under it). */
export function callMetadata(token: string | undefined): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set(INTERNAL_TOKEN_METADATA_KEY, bearer(token));
  const requestId = currentRequestId();
  if (requestId !== undefined) metadata.set(REQUEST_ID_METADATA_KEY, requestId);
  return metadata;
}

/** Makes a unary call (its metadata and options made as it starts); a failure is an AppError. */
export function unaryCall<Res>(
  call: UnaryCall<Res>,
  metadata: () => grpc.Metadata,
  options: () => grpc.CallOptions,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    call(metadata(), options(), (err, response) => {
      if (err !== null || response === undefined) reject(fromGrpcError(err));
      else resolve(response);
    });
  });
}

/**
 * An idempotent call that the node may lose (an agent restarted under it): when the
 * connection was up as the call began and failed under it, the call is made again once the
 * node answers, for up to RECONNECT_WAIT_MS after each loss. A node already unreachable at
 * the start fails at once, as any call does.
 */
export async function surviving<Res>(
  client: GrpcAgentClient,
  attempt: () => Promise<Res>,
): Promise<Res> {
  for (;;) {
    const wasConnected =
      client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
    try {
      return await attempt();
    } catch (err) {
      if (!wasConnected || !isConnectionFailure(err) || !(await reconnected(client))) throw err;
    }
  }
}

/** Whether the node answers again within RECONNECT_WAIT_MS. */
function reconnected(client: GrpcAgentClient): Promise<boolean> {
  return new Promise((resolve) => {
    client.waitForReady(Date.now() + RECONNECT_WAIT_MS, (err) => resolve(!err));
  });
}
