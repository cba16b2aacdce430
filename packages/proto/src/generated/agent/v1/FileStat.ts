// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface FileStat {
  'path'?: (string);
  'type'?: (string);
  'size'?: (number | string | Long);
  'modified'?: (string);
  'mode'?: (number);
}

export interface FileStat__Output {
  'path': (string);
  'type': (string);
  'size': (number);
  'modified': (string);
  'mode': (number);
}
