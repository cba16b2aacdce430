import { runService } from '@sandbox/contract';
import { loadAgentConfig } from '@sandbox/config';
import { startAgent } from './create-agent';
import { DockerRuntime } from './runtime/docker-runtime';

runService('agent', loadAgentConfig, (config, logger) =>
  startAgent({ config, logger, runtime: new DockerRuntime({ config, logger }) }),
);
