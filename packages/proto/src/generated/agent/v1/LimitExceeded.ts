// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface LimitExceeded {
  'limit'?: (string);
  'max'?: (number | string | Long);
}

export interface LimitExceeded__Output {
  'limit': (string);
  'max': (number);
}
