// Original file: proto/agent/v1/agent.proto

import type { ProcessInfo as _agent_v1_ProcessInfo, ProcessInfo__Output as _agent_v1_ProcessInfo__Output } from '../../agent/v1/ProcessInfo';

export interface ListProcessesResponse {
  'processes'?: (_agent_v1_ProcessInfo)[];
}

export interface ListProcessesResponse__Output {
  'processes': (_agent_v1_ProcessInfo__Output)[];
}
