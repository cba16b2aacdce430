// Original file: proto/agent/v1/agent.proto


export interface RemoveFileRequest {
  'sessionId'?: (string);
  'path'?: (string);
  'recursive'?: (boolean);
}

export interface RemoveFileRequest__Output {
  'sessionId': (string);
  'path': (string);
  'recursive': (boolean);
}
