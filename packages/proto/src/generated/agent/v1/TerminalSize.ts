// Original file: proto/agent/v1/agent.proto


export interface TerminalSize {
  'cols'?: (number);
  'rows'?: (number);
}

export interface TerminalSize__Output {
  'cols': (number);
  'rows': (number);
}
