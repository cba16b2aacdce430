// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface FileChunk {
  'data'?: (Buffer | Uint8Array | string);
  'size'?: (number | string | Long);
}

export interface FileChunk__Output {
  'data': (Buffer);
  'size': (number);
}
