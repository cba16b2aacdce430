// Original file: proto/agent/v1/agent.proto

import type { ResourceLimits as _agent_v1_ResourceLimits, ResourceLimits__Output as _agent_v1_ResourceLimits__Output } from '../../agent/v1/ResourceLimits';
import type { EgressPolicy as _agent_v1_EgressPolicy, EgressPolicy__Output as _agent_v1_EgressPolicy__Output } from '../../agent/v1/EgressPolicy';

export interface CreateSandboxRequest {
  'sessionId'?: (string);
  'accountId'?: (string);
  'limits'?: (_agent_v1_ResourceLimits | null);
  'egress'?: (_agent_v1_EgressPolicy | null);
  'snapshotId'?: (string);
}

export interface CreateSandboxRequest__Output {
  'sessionId': (string);
  'accountId': (string);
  'limits': (_agent_v1_ResourceLimits__Output | null);
  'egress': (_agent_v1_EgressPolicy__Output | null);
  'snapshotId': (string);
}
