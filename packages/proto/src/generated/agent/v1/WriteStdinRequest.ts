// Original file: proto/agent/v1/agent.proto


export interface WriteStdinRequest {
  'sessionId'?: (string);
  'process'?: (string);
  'data'?: (Buffer | Uint8Array | string);
  'close'?: (boolean);
  'waitMs'?: (number);
}

export interface WriteStdinRequest__Output {
  'sessionId': (string);
  'process': (string);
  'data': (Buffer);
  'close': (boolean);
  'waitMs': (number);
}
