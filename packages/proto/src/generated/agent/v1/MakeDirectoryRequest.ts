// Original file: proto/agent/v1/agent.proto


export interface MakeDirectoryRequest {
  'sessionId'?: (string);
  'path'?: (string);
}

export interface MakeDirectoryRequest__Output {
  'sessionId': (string);
  'path': (string);
}
