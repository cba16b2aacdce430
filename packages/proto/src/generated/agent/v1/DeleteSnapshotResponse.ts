// Original file: proto/agent/v1/agent.proto


export interface DeleteSnapshotResponse {
}

export interface DeleteSnapshotResponse__Output {
}
