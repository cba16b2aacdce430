// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface SnapshotResponse {
  'bytes'?: (number | string | Long);
  'filesCount'?: (number);
  'pausedMs'?: (number);
  'processesKept'?: (boolean);
  'storedIn'?: (string);
}

export interface SnapshotResponse__Output {
  'bytes': (number);
  'filesCount': (number);
  'pausedMs': (number);
  'processesKept': (boolean);
  'storedIn': (string);
}
