// Original file: proto/agent/v1/agent.proto

import type { CellResult as _agent_v1_CellResult, CellResult__Output as _agent_v1_CellResult__Output } from '../../agent/v1/CellResult';
import type { CellError as _agent_v1_CellError, CellError__Output as _agent_v1_CellError__Output } from '../../agent/v1/CellError';

export interface CellOutcome {
  'results'?: (_agent_v1_CellResult)[];
  'error'?: (_agent_v1_CellError | null);
}

export interface CellOutcome__Output {
  'results': (_agent_v1_CellResult__Output)[];
  'error': (_agent_v1_CellError__Output | null);
}
