// Original file: proto/agent/v1/agent.proto

import type { CreateSandboxRequest as _agent_v1_CreateSandboxRequest, CreateSandboxRequest__Output as _agent_v1_CreateSandboxRequest__Output } from '../../agent/v1/CreateSandboxRequest';

export interface ForkSandboxRequest {
  'sourceSessionId'?: (string);
  'forks'?: (_agent_v1_CreateSandboxRequest)[];
  'processes'?: (boolean);
}

export interface ForkSandboxRequest__Output {
  'sourceSessionId': (string);
  'forks': (_agent_v1_CreateSandboxRequest__Output)[];
  'processes': (boolean);
}
