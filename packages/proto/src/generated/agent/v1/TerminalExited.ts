// Original file: proto/agent/v1/agent.proto


export interface TerminalExited {
  'exitCode'?: (number);
}

export interface TerminalExited__Output {
  'exitCode': (number);
}
