// Original file: proto/agent/v1/agent.proto


export interface KillProcessesRequest {
  'sessionId'?: (string);
  'pid'?: (number);
}

export interface KillProcessesRequest__Output {
  'sessionId': (string);
  'pid': (number);
}
