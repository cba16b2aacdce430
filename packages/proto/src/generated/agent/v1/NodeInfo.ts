// Original file: proto/agent/v1/agent.proto

import type { PoolShape as _agent_v1_PoolShape, PoolShape__Output as _agent_v1_PoolShape__Output } from '../../agent/v1/PoolShape';
import type { Long } from '@grpc/proto-loader';

export interface NodeInfo {
  'nodeId'?: (string);
  'version'?: (string);
  'sandboxes'?: (number);
  'previewAddress'?: (string);
  'pool'?: (_agent_v1_PoolShape)[];
  'maxSandboxes'?: (number);
  'memoryTotalBytes'?: (number | string | Long);
  'memoryAvailableBytes'?: (number | string | Long);
  'memoryReserveBytes'?: (number | string | Long);
  'cpus'?: (number | string);
  'loadAverage'?: (number | string);
  'blobStore'?: (string);
  'sandboxesAgeMs'?: (number);
}

export interface NodeInfo__Output {
  'nodeId': (string);
  'version': (string);
  'sandboxes': (number);
  'previewAddress': (string);
  'pool': (_agent_v1_PoolShape__Output)[];
  'maxSandboxes': (number);
  'memoryTotalBytes': (number);
  'memoryAvailableBytes': (number);
  'memoryReserveBytes': (number);
  'cpus': (number);
  'loadAverage': (number);
  'blobStore': (string);
  'sandboxesAgeMs': (number);
}
