import { runService } from '@sandbox/contract';
import { loadEdgeProxyConfig } from '@sandbox/config';
import { startEdgeProxy } from './create-edge-proxy';

runService('edge-proxy', loadEdgeProxyConfig, (config, logger) =>
  startEdgeProxy({ config, logger }),
);
