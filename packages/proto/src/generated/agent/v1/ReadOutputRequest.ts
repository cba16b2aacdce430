// Original file: proto/agent/v1/agent.proto

import type { LogPosition as _agent_v1_LogPosition, LogPosition__Output as _agent_v1_LogPosition__Output } from '../../agent/v1/LogPosition';

export interface ReadOutputRequest {
  'sessionId'?: (string);
  'process'?: (string);
  'from'?: (_agent_v1_LogPosition | null);
  'follow'?: (boolean);
  'untilExit'?: (boolean);
}

export interface ReadOutputRequest__Output {
  'sessionId': (string);
  'process': (string);
  'from': (_agent_v1_LogPosition__Output | null);
  'follow': (boolean);
  'untilExit': (boolean);
}
