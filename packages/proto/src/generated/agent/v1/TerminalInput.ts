// Original file: proto/agent/v1/agent.proto

import type { TerminalStart as _agent_v1_TerminalStart, TerminalStart__Output as _agent_v1_TerminalStart__Output } from '../../agent/v1/TerminalStart';
import type { TerminalSize as _agent_v1_TerminalSize, TerminalSize__Output as _agent_v1_TerminalSize__Output } from '../../agent/v1/TerminalSize';

export interface TerminalInput {
  'start'?: (_agent_v1_TerminalStart | null);
  'data'?: (Buffer | Uint8Array | string);
  'resize'?: (_agent_v1_TerminalSize | null);
  'input'?: "start"|"data"|"resize";
}

export interface TerminalInput__Output {
  'start'?: (_agent_v1_TerminalStart__Output | null);
  'data'?: (Buffer);
  'resize'?: (_agent_v1_TerminalSize__Output | null);
  'input'?: "start"|"data"|"resize";
}
