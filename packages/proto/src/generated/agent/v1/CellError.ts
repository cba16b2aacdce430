// Original file: proto/agent/v1/agent.proto


export interface CellError {
  'name'?: (string);
  'message'?: (string);
  'stack'?: (string);
}

export interface CellError__Output {
  'name': (string);
  'message': (string);
  'stack': (string);
}
