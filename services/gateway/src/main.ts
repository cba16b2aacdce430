import { runService } from '@sandbox/contract';
import { loadGatewayConfig } from '@sandbox/config';
import { startGateway } from './create-gateway';

runService('gateway', loadGatewayConfig, (config, logger) => startGateway({ config, logger }));
