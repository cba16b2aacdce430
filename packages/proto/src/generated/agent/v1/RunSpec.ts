// Original file: proto/agent/v1/agent.proto

import type { FileInput as _agent_v1_FileInput, FileInput__Output as _agent_v1_FileInput__Output } from '../../agent/v1/FileInput';
import type { Long } from '@grpc/proto-loader';

export interface RunSpec {
  'sessionId'?: (string);
  'command'?: (string);
  'code'?: (string);
  'env'?: ({[key: string]: string});
  'workingDir'?: (string);
  'timeoutMs'?: (number);
  'files'?: (_agent_v1_FileInput)[];
  'stdin'?: (boolean);
  'logBytes'?: (number | string | Long);
  'contextId'?: (string);
  'program'?: "command"|"code";
}

export interface RunSpec__Output {
  'sessionId': (string);
  'command'?: (string);
  'code'?: (string);
  'env': ({[key: string]: string});
  'workingDir': (string);
  'timeoutMs': (number);
  'files': (_agent_v1_FileInput__Output)[];
  'stdin': (boolean);
  'logBytes': (number);
  'contextId': (string);
  'program'?: "command"|"code";
}
