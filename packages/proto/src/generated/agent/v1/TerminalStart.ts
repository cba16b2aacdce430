// Original file: proto/agent/v1/agent.proto


export interface TerminalStart {
  'sessionId'?: (string);
  'argv'?: (string)[];
  'env'?: ({[key: string]: string});
  'workingDir'?: (string);
  'cols'?: (number);
  'rows'?: (number);
}

export interface TerminalStart__Output {
  'sessionId': (string);
  'argv': (string)[];
  'env': ({[key: string]: string});
  'workingDir': (string);
  'cols': (number);
  'rows': (number);
}
