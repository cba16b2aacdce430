import { runService } from '@sandbox/contract';
import { loadAgentConfig } from '@sandbox/config';
import { startAgent } from './create-agent';
import { createDockerRuntime } from './runtime/create-docker-runtime';

runService('agent', loadAgentConfig, (config, logger) =>
  startAgent({ config, logger, runtime: createDockerRuntime({ config, logger }) }),
);
