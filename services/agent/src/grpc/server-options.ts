import type { ServerOptions } from '@grpc/grpc-js';

/**
 * The agent's gRPC server options. Channelz (gRPC's own introspection service, which nothing
 * here serves or reads) is off: with it on, grpc-js counts every call and message of the
 * server, its session and its socket, with a `Date` per call and two `Date.now()` per message,
 * on each run's path.
 */
export const AGENT_SERVER_OPTIONS: ServerOptions = {
  'grpc.max_receive_message_length': 128 * 1024 * 1024,
  'grpc.enable_channelz': 0,
};
