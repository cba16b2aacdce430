// Original file: proto/agent/v1/agent.proto


export interface GetNodeInfoRequest {
}

export interface GetNodeInfoRequest__Output {
}
