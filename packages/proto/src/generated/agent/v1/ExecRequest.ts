// Original file: proto/agent/v1/agent.proto


export interface ExecRequest {
  'sessionId'?: (string);
  'command'?: (string);
  'code'?: (string);
  'env'?: ({[key: string]: string});
  'workingDir'?: (string);
  'timeoutMs'?: (number);
  'program'?: "command"|"code";
}

export interface ExecRequest__Output {
  'sessionId': (string);
  'command'?: (string);
  'code'?: (string);
  'env': ({[key: string]: string});
  'workingDir': (string);
  'timeoutMs': (number);
  'program'?: "command"|"code";
}
