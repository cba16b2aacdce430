// Original file: proto/agent/v1/agent.proto

import type { CodeContext as _agent_v1_CodeContext, CodeContext__Output as _agent_v1_CodeContext__Output } from '../../agent/v1/CodeContext';

export interface ContextsResponse {
  'contexts'?: (_agent_v1_CodeContext)[];
}

export interface ContextsResponse__Output {
  'contexts': (_agent_v1_CodeContext__Output)[];
}
