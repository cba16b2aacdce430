// Original file: proto/agent/v1/agent.proto


export interface DestroySandboxRequest {
  'sessionId'?: (string);
}

export interface DestroySandboxRequest__Output {
  'sessionId': (string);
}
