// Original file: proto/agent/v1/agent.proto

import type { OutputChunk as _agent_v1_OutputChunk, OutputChunk__Output as _agent_v1_OutputChunk__Output } from '../../agent/v1/OutputChunk';
import type { RunResult as _agent_v1_RunResult, RunResult__Output as _agent_v1_RunResult__Output } from '../../agent/v1/RunResult';
import type { ExecStarted as _agent_v1_ExecStarted, ExecStarted__Output as _agent_v1_ExecStarted__Output } from '../../agent/v1/ExecStarted';

export interface ExecEvent {
  'stdout'?: (_agent_v1_OutputChunk | null);
  'stderr'?: (_agent_v1_OutputChunk | null);
  'result'?: (_agent_v1_RunResult | null);
  'started'?: (_agent_v1_ExecStarted | null);
  'event'?: "stdout"|"stderr"|"result"|"started";
}

export interface ExecEvent__Output {
  'stdout'?: (_agent_v1_OutputChunk__Output | null);
  'stderr'?: (_agent_v1_OutputChunk__Output | null);
  'result'?: (_agent_v1_RunResult__Output | null);
  'started'?: (_agent_v1_ExecStarted__Output | null);
  'event'?: "stdout"|"stderr"|"result"|"started";
}
