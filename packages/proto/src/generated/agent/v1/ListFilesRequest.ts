// Original file: proto/agent/v1/agent.proto


export interface ListFilesRequest {
  'sessionId'?: (string);
  'path'?: (string);
  'limit'?: (number);
  'offset'?: (number);
}

export interface ListFilesRequest__Output {
  'sessionId': (string);
  'path': (string);
  'limit': (number);
  'offset': (number);
}
