// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface TransitionRequest {
  'sessionId'?: (string);
  'unusedForMs'?: (number | string | Long);
  'evacuate'?: (boolean);
}

export interface TransitionRequest__Output {
  'sessionId': (string);
  'unusedForMs': (number);
  'evacuate': (boolean);
}
