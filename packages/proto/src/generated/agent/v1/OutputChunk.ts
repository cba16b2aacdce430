// Original file: proto/agent/v1/agent.proto


export interface OutputChunk {
  'data'?: (Buffer | Uint8Array | string);
}

export interface OutputChunk__Output {
  'data': (Buffer);
}
