// Original file: proto/agent/v1/agent.proto


export interface ExecStarted {
}

export interface ExecStarted__Output {
}
