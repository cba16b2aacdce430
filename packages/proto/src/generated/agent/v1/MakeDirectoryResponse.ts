// Original file: proto/agent/v1/agent.proto


export interface MakeDirectoryResponse {
  'path'?: (string);
  'created'?: (boolean);
}

export interface MakeDirectoryResponse__Output {
  'path': (string);
  'created': (boolean);
}
