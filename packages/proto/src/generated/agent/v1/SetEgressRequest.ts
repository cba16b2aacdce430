// Original file: proto/agent/v1/agent.proto

import type { EgressPolicy as _agent_v1_EgressPolicy, EgressPolicy__Output as _agent_v1_EgressPolicy__Output } from '../../agent/v1/EgressPolicy';

export interface SetEgressRequest {
  'sessionId'?: (string);
  'egress'?: (_agent_v1_EgressPolicy | null);
}

export interface SetEgressRequest__Output {
  'sessionId': (string);
  'egress': (_agent_v1_EgressPolicy__Output | null);
}
