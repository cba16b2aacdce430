// Original file: proto/agent/v1/agent.proto


export interface ContextsRequest {
  'sessionId'?: (string);
  'action'?: (string);
  'contextId'?: (string);
  'language'?: (string);
  'workingDir'?: (string);
  'env'?: ({[key: string]: string});
}

export interface ContextsRequest__Output {
  'sessionId': (string);
  'action': (string);
  'contextId': (string);
  'language': (string);
  'workingDir': (string);
  'env': ({[key: string]: string});
}
