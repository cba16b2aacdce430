// Original file: proto/agent/v1/agent.proto


export interface EgressPolicy {
  'default'?: (string);
  'allow'?: (string)[];
  'deny'?: (string)[];
}

export interface EgressPolicy__Output {
  'default': (string);
  'allow': (string)[];
  'deny': (string)[];
}
