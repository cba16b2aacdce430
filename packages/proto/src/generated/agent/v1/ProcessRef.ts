// Original file: proto/agent/v1/agent.proto


export interface ProcessRef {
  'id'?: (string);
  'pid'?: (number);
}

export interface ProcessRef__Output {
  'id': (string);
  'pid': (number);
}
