// Original file: proto/agent/v1/agent.proto

import type { Long } from '@grpc/proto-loader';

export interface HibernateResponse {
  'filesCount'?: (number);
  'bytes'?: (number | string | Long);
  'inUse'?: (boolean);
  'savedIn'?: (string);
}

export interface HibernateResponse__Output {
  'filesCount': (number);
  'bytes': (number);
  'inUse': (boolean);
  'savedIn': (string);
}
