import { DockerodeContainerClient } from '@sandbox/agent';
import type { Logger } from '@sandbox/logger';
import { docker } from './stack';

/**
 * The real Docker calls of an agent's runtime (given to `createDockerRuntime`), where finding a
 * container takes `delayMs` more: every lifecycle step and every inspection starts with one, as
 * on an overloaded host.
 */
export class SlowContainers extends DockerodeContainerClient {
  delayMs = 0;

  constructor(logger: Logger) {
    super(docker, logger);
  }

  override async find(container: string) {
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    return super.find(container);
  }
}
