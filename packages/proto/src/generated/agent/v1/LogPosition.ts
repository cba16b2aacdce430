// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface LogPosition {
  'stdout'?: (number | string | Long);
  'stderr'?: (number | string | Long);
}

export interface LogPosition__Output {
  'stdout': (number);
  'stderr': (number);
}
