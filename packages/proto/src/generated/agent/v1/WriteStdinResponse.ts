// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface WriteStdinResponse {
  'written'?: (number | string | Long);
  'complete'?: (boolean);
}

export interface WriteStdinResponse__Output {
  'written': (number);
  'complete': (boolean);
}
