// Original file: proto/agent/v1/agent.proto

import type { PoolShape as _agent_v1_PoolShape, PoolShape__Output as _agent_v1_PoolShape__Output } from '../../agent/v1/PoolShape';

export interface NodeInfo {
  'nodeId'?: (string);
  'version'?: (string);
  'sandboxes'?: (number);
  'previewAddress'?: (string);
  'pool'?: (_agent_v1_PoolShape)[];
}

export interface NodeInfo__Output {
  'nodeId': (string);
  'version': (string);
  'sandboxes': (number);
  'previewAddress': (string);
  'pool': (_agent_v1_PoolShape__Output)[];
}
