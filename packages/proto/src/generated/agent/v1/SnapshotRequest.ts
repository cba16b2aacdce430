// Original file: proto/agent/v1/agent.proto


export interface SnapshotRequest {
  'sessionId'?: (string);
  'snapshotId'?: (string);
  'processes'?: (boolean);
}

export interface SnapshotRequest__Output {
  'sessionId': (string);
  'snapshotId': (string);
  'processes': (boolean);
}
