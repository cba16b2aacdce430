// Original file: proto/agent/v1/agent.proto


export interface Sandbox {
  'sessionId'?: (string);
  'containerId'?: (string);
  'status'?: (string);
  'filesCount'?: (number);
  'activeProcesses'?: (number);
}

export interface Sandbox__Output {
  'sessionId': (string);
  'containerId': (string);
  'status': (string);
  'filesCount': (number);
  'activeProcesses': (number);
}
