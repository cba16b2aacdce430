// Original file: proto/agent/v1/agent.proto


export interface CellResult {
  'data'?: ({[key: string]: string});
  'isMain'?: (boolean);
}

export interface CellResult__Output {
  'data': ({[key: string]: string});
  'isMain': (boolean);
}
