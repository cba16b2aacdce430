// Original file: proto/agent/v1/agent.proto


export interface PoolShape {
  'size'?: (number);
  'ready'?: (number);
  'memoryMb'?: (number);
  'cpu'?: (number | string);
  'diskMb'?: (number);
  'target'?: (number);
}

export interface PoolShape__Output {
  'size': (number);
  'ready': (number);
  'memoryMb': (number);
  'cpu': (number);
  'diskMb': (number);
  'target': (number);
}
