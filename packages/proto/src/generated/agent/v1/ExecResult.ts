// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface ExecResult {
  'exitCode'?: (number);
  'executionTimeMs'?: (number | string | Long);
  'memoryUsedBytes'?: (number | string | Long);
  'cpuTimeMs'?: (number | string | Long);
  'timedOut'?: (boolean);
  'filesWritten'?: (string)[];
}

export interface ExecResult__Output {
  'exitCode': (number);
  'executionTimeMs': (number);
  'memoryUsedBytes': (number);
  'cpuTimeMs': (number);
  'timedOut': (boolean);
  'filesWritten': (string)[];
}
