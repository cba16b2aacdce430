// Original file: proto/agent/v1/agent.proto

import type { ProcessInfo as _agent_v1_ProcessInfo, ProcessInfo__Output as _agent_v1_ProcessInfo__Output } from '../../agent/v1/ProcessInfo';
import type { OutputChunk as _agent_v1_OutputChunk, OutputChunk__Output as _agent_v1_OutputChunk__Output } from '../../agent/v1/OutputChunk';
import type { LogPosition as _agent_v1_LogPosition, LogPosition__Output as _agent_v1_LogPosition__Output } from '../../agent/v1/LogPosition';

export interface OutputEvent {
  'process'?: (_agent_v1_ProcessInfo | null);
  'stdout'?: (_agent_v1_OutputChunk | null);
  'stderr'?: (_agent_v1_OutputChunk | null);
  'gap'?: (_agent_v1_LogPosition | null);
  'end'?: (_agent_v1_ProcessInfo | null);
  'event'?: "process"|"stdout"|"stderr"|"gap"|"end";
}

export interface OutputEvent__Output {
  'process'?: (_agent_v1_ProcessInfo__Output | null);
  'stdout'?: (_agent_v1_OutputChunk__Output | null);
  'stderr'?: (_agent_v1_OutputChunk__Output | null);
  'gap'?: (_agent_v1_LogPosition__Output | null);
  'end'?: (_agent_v1_ProcessInfo__Output | null);
  'event'?: "process"|"stdout"|"stderr"|"gap"|"end";
}
