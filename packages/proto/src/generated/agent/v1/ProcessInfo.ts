// Original file: proto/agent/v1/agent.proto

import type { RunResult as _agent_v1_RunResult, RunResult__Output as _agent_v1_RunResult__Output } from '../../agent/v1/RunResult';
import type { LogPosition as _agent_v1_LogPosition, LogPosition__Output as _agent_v1_LogPosition__Output } from '../../agent/v1/LogPosition';
import type { Long } from '@grpc/proto-loader';

export interface ProcessInfo {
  'id'?: (string);
  'pid'?: (number);
  'kind'?: (string);
  'label'?: (string);
  'state'?: (string);
  'startedAt'?: (string);
  'exitedAt'?: (string);
  'result'?: (_agent_v1_RunResult | null);
  'failureCode'?: (string);
  'failureMessage'?: (string);
  'stdin'?: (boolean);
  'stdinBytes'?: (number | string | Long);
  'outputClosed'?: (boolean);
  'written'?: (_agent_v1_LogPosition | null);
  'keptFrom'?: (_agent_v1_LogPosition | null);
  'logBytes'?: (number | string | Long);
}

export interface ProcessInfo__Output {
  'id': (string);
  'pid': (number);
  'kind': (string);
  'label': (string);
  'state': (string);
  'startedAt': (string);
  'exitedAt': (string);
  'result': (_agent_v1_RunResult__Output | null);
  'failureCode': (string);
  'failureMessage': (string);
  'stdin': (boolean);
  'stdinBytes': (number);
  'outputClosed': (boolean);
  'written': (_agent_v1_LogPosition__Output | null);
  'keptFrom': (_agent_v1_LogPosition__Output | null);
  'logBytes': (number);
}
