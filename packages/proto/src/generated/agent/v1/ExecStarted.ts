// Original file: proto/agent/v1/agent.proto

import type { ProcessRef as _agent_v1_ProcessRef, ProcessRef__Output as _agent_v1_ProcessRef__Output } from '../../agent/v1/ProcessRef';

export interface ExecStarted {
  'process'?: (_agent_v1_ProcessRef | null);
}

export interface ExecStarted__Output {
  'process': (_agent_v1_ProcessRef__Output | null);
}
