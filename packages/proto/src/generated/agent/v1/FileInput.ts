// Original file: proto/agent/v1/agent.proto


export interface FileInput {
  'path'?: (string);
  'content'?: (Buffer | Uint8Array | string);
}

export interface FileInput__Output {
  'path': (string);
  'content': (Buffer);
}
