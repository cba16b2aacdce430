// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface FileEntry {
  'path'?: (string);
  'size'?: (number | string | Long);
  'modified'?: (string);
  'type'?: (string);
}

export interface FileEntry__Output {
  'path': (string);
  'size': (number);
  'modified': (string);
  'type': (string);
}
