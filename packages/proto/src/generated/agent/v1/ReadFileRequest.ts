// Original file: proto/agent/v1/agent.proto


export interface ReadFileRequest {
  'sessionId'?: (string);
  'path'?: (string);
}

export interface ReadFileRequest__Output {
  'sessionId': (string);
  'path': (string);
}
