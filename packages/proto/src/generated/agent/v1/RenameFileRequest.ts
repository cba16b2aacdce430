// Original file: proto/agent/v1/agent.proto


export interface RenameFileRequest {
  'sessionId'?: (string);
  'from'?: (string);
  'to'?: (string);
  'overwrite'?: (boolean);
}

export interface RenameFileRequest__Output {
  'sessionId': (string);
  'from': (string);
  'to': (string);
  'overwrite': (boolean);
}
