// Original file: proto/agent/v1/agent.proto


export interface DestroySandboxResponse {
  'existed'?: (boolean);
}

export interface DestroySandboxResponse__Output {
  'existed': (boolean);
}
