// Original file: proto/agent/v1/agent.proto


export interface FileChunk {
  'data'?: (Buffer | Uint8Array | string);
}

export interface FileChunk__Output {
  'data': (Buffer);
}
