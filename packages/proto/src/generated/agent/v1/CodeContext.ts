// Original file: proto/agent/v1/agent.proto


export interface CodeContext {
  'contextId'?: (string);
  'language'?: (string);
  'workingDir'?: (string);
  'createdAt'?: (string);
}

export interface CodeContext__Output {
  'contextId': (string);
  'language': (string);
  'workingDir': (string);
  'createdAt': (string);
}
