// Original file: proto/agent/v1/agent.proto


export interface NodeInfo {
  'nodeId'?: (string);
  'version'?: (string);
  'sandboxes'?: (number);
  'previewAddress'?: (string);
}

export interface NodeInfo__Output {
  'nodeId': (string);
  'version': (string);
  'sandboxes': (number);
  'previewAddress': (string);
}
