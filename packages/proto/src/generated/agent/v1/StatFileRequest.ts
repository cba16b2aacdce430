// Original file: proto/agent/v1/agent.proto


export interface StatFileRequest {
  'sessionId'?: (string);
  'path'?: (string);
}

export interface StatFileRequest__Output {
  'sessionId': (string);
  'path': (string);
}
