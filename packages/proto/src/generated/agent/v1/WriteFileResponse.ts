// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface WriteFileResponse {
  'path'?: (string);
  'size'?: (number | string | Long);
}

export interface WriteFileResponse__Output {
  'path': (string);
  'size': (number);
}
