// Original file: proto/agent/v1/agent.proto


export interface ResourceLimits {
  'memoryMb'?: (number);
  'cpu'?: (number | string);
  'diskMb'?: (number);
  'pids'?: (number);
}

export interface ResourceLimits__Output {
  'memoryMb': (number);
  'cpu': (number);
  'diskMb': (number);
  'pids': (number);
}
