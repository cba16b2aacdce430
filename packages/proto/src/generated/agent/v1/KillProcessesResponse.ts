// Original file: proto/agent/v1/agent.proto


export interface KillProcessesResponse {
  'pids'?: (number)[];
}

export interface KillProcessesResponse__Output {
  'pids': (number)[];
}
