// Original file: proto/agent/v1/agent.proto


export interface ListProcessesRequest {
  'sessionId'?: (string);
}

export interface ListProcessesRequest__Output {
  'sessionId': (string);
}
