// Original file: proto/agent/v1/agent.proto

import type { Sandbox as _agent_v1_Sandbox, Sandbox__Output as _agent_v1_Sandbox__Output } from '../../agent/v1/Sandbox';

export interface ForkSandboxResponse {
  'sandboxes'?: (_agent_v1_Sandbox)[];
  'processesKept'?: (boolean);
}

export interface ForkSandboxResponse__Output {
  'sandboxes': (_agent_v1_Sandbox__Output)[];
  'processesKept': (boolean);
}
