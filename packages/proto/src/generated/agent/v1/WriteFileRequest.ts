// Original file: proto/agent/v1/agent.proto


export interface WriteFileRequest {
  'sessionId'?: (string);
  'path'?: (string);
  'content'?: (Buffer | Uint8Array | string);
}

export interface WriteFileRequest__Output {
  'sessionId': (string);
  'path': (string);
  'content': (Buffer);
}
