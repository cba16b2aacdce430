// Original file: proto/agent/v1/agent.proto

import type { TerminalStarted as _agent_v1_TerminalStarted, TerminalStarted__Output as _agent_v1_TerminalStarted__Output } from '../../agent/v1/TerminalStarted';
import type { TerminalExited as _agent_v1_TerminalExited, TerminalExited__Output as _agent_v1_TerminalExited__Output } from '../../agent/v1/TerminalExited';

export interface TerminalOutput {
  'started'?: (_agent_v1_TerminalStarted | null);
  'data'?: (Buffer | Uint8Array | string);
  'exited'?: (_agent_v1_TerminalExited | null);
  'output'?: "started"|"data"|"exited";
}

export interface TerminalOutput__Output {
  'started'?: (_agent_v1_TerminalStarted__Output | null);
  'data'?: (Buffer);
  'exited'?: (_agent_v1_TerminalExited__Output | null);
  'output'?: "started"|"data"|"exited";
}
