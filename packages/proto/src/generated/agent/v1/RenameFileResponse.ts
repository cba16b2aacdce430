// Original file: proto/agent/v1/agent.proto


export interface RenameFileResponse {
  'from'?: (string);
  'to'?: (string);
}

export interface RenameFileResponse__Output {
  'from': (string);
  'to': (string);
}
