// Original file: proto/agent/v1/agent.proto


export interface RemoveFileResponse {
  'path'?: (string);
}

export interface RemoveFileResponse__Output {
  'path': (string);
}
