import {
  createDockerRuntime,
  DockerodeContainerClient,
  type DockerRuntime,
  type SandboxRuntime,
} from '@sandbox/agent';
import type { AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { docker } from './stack';

/** How much longer each lookup of a container takes; tests change it as they go. */
export interface Slowness {
  delayMs: number;
}

/**
 * The real Docker calls of an agent's runtime, where finding a container takes longer: every
 * lifecycle step and every inspection starts with one, as on an overloaded host.
 */
class SlowContainers extends DockerodeContainerClient {
  constructor(
    logger: Logger,
    private readonly slowness: Slowness,
  ) {
    super(docker, logger);
  }

  override async find(container: string) {
    await new Promise((resolve) => setTimeout(resolve, this.slowness.delayMs));
    return super.find(container);
  }
}

/** The real Docker runtime (a `startStack` option), made slow on demand through `slowness`. */
export function slowRuntime(): {
  slowness: Slowness;
  runtime: (config: AgentConfig, logger: Logger) => SandboxRuntime;
  /** Resolves once the runtime's warm pool is full (30 s at most): creates are quick then. */
  poolFull: () => Promise<void>;
} {
  const slowness: Slowness = { delayMs: 0 };
  let made: DockerRuntime | undefined;
  return {
    slowness,
    runtime: (config, logger) =>
      (made = createDockerRuntime({
        config,
        logger,
        containers: new SlowContainers(logger, slowness),
      })),
    async poolFull() {
      const deadline = Date.now() + 30_000;
      const missing = () =>
        (made?.poolStatus() ?? [{ size: 1, ready: 0 }]).some((shape) => shape.ready < shape.size);
      while (missing()) {
        if (Date.now() > deadline) throw new Error('the warm pool did not fill');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}
