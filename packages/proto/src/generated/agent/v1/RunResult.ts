// Original file: proto/agent/v1/agent.proto

import type { LimitExceeded as _agent_v1_LimitExceeded, LimitExceeded__Output as _agent_v1_LimitExceeded__Output } from '../../agent/v1/LimitExceeded';
import type { ProcessRef as _agent_v1_ProcessRef, ProcessRef__Output as _agent_v1_ProcessRef__Output } from '../../agent/v1/ProcessRef';
import type { CellOutcome as _agent_v1_CellOutcome, CellOutcome__Output as _agent_v1_CellOutcome__Output } from '../../agent/v1/CellOutcome';
import type { Long } from '@grpc/proto-loader';

export interface RunResult {
  'exitCode'?: (number);
  'executionTimeMs'?: (number | string | Long);
  'memoryUsedBytes'?: (number | string | Long);
  'cpuTimeMs'?: (number | string | Long);
  'timedOut'?: (boolean);
  'filesWritten'?: (string)[];
  'limitsExceeded'?: (_agent_v1_LimitExceeded)[];
  'process'?: (_agent_v1_ProcessRef | null);
  'cell'?: (_agent_v1_CellOutcome | null);
}

export interface RunResult__Output {
  'exitCode': (number);
  'executionTimeMs': (number);
  'memoryUsedBytes': (number);
  'cpuTimeMs': (number);
  'timedOut': (boolean);
  'filesWritten': (string)[];
  'limitsExceeded': (_agent_v1_LimitExceeded__Output)[];
  'process': (_agent_v1_ProcessRef__Output | null);
  'cell': (_agent_v1_CellOutcome__Output | null);
}
