// Original file: proto/agent/v1/agent.proto


export interface GetSandboxRequest {
  'sessionId'?: (string);
}

export interface GetSandboxRequest__Output {
  'sessionId': (string);
}
