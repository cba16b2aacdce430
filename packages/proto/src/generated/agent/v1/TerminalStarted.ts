// Original file: proto/agent/v1/agent.proto


export interface TerminalStarted {
  'pid'?: (number);
}

export interface TerminalStarted__Output {
  'pid': (number);
}
