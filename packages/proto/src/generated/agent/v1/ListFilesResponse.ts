// Original file: proto/agent/v1/agent.proto

import type { FileEntry as _agent_v1_FileEntry, FileEntry__Output as _agent_v1_FileEntry__Output } from '../../agent/v1/FileEntry';

export interface ListFilesResponse {
  'files'?: (_agent_v1_FileEntry)[];
  'truncated'?: (boolean);
  'total'?: (number);
}

export interface ListFilesResponse__Output {
  'files': (_agent_v1_FileEntry__Output)[];
  'truncated': (boolean);
  'total': (number);
}
