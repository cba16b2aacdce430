// Original file: proto/agent/v1/agent.proto

import type { LogPosition as _agent_v1_LogPosition, LogPosition__Output as _agent_v1_LogPosition__Output } from '../../agent/v1/LogPosition';
import type { ProcessRef as _agent_v1_ProcessRef, ProcessRef__Output as _agent_v1_ProcessRef__Output } from '../../agent/v1/ProcessRef';

export interface OutputChunk {
  'data'?: (Buffer | Uint8Array | string);
  'at'?: (_agent_v1_LogPosition | null);
  'process'?: (_agent_v1_ProcessRef | null);
}

export interface OutputChunk__Output {
  'data': (Buffer);
  'at': (_agent_v1_LogPosition__Output | null);
  'process': (_agent_v1_ProcessRef__Output | null);
}
