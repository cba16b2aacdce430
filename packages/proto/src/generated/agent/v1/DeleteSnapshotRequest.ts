// Original file: proto/agent/v1/agent.proto


export interface DeleteSnapshotRequest {
  'snapshotId'?: (string);
}

export interface DeleteSnapshotRequest__Output {
  'snapshotId': (string);
}
