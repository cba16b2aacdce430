import type {
  ContainerClient,
  ContainerCreateOptions,
  ContainerLimits,
  ContainerState,
  ContainerSummary,
  HostProcess,
  NetworkCreateOptions,
  NetworkState,
} from './container-client';

/**
 * A container client that passes every call to `inner`: the base of the clients that change
 * a few calls (the state cache, the CPU split) and leave the rest as Docker answers them.
 */
export class ForwardingContainers implements ContainerClient {
  constructor(protected readonly inner: ContainerClient) {}

  find(container: string): Promise<ContainerState | undefined> {
    return this.inner.find(container);
  }

  createAndStart(options: ContainerCreateOptions): Promise<string> {
    return this.inner.createAndStart(options);
  }

  remove(container: string): Promise<boolean> {
    return this.inner.remove(container);
  }

  pause(container: string): Promise<void> {
    return this.inner.pause(container);
  }

  unpause(container: string): Promise<void> {
    return this.inner.unpause(container);
  }

  rename(container: string, name: string): Promise<void> {
    return this.inner.rename(container, name);
  }

  updateLimits(container: string, limits: ContainerLimits): Promise<void> {
    return this.inner.updateLimits(container, limits);
  }

  start(container: string): Promise<void> {
    return this.inner.start(container);
  }

  execute(
    container: string,
    user: string,
    cmd: string[],
  ): Promise<{ code: number; stdout: string }> {
    return this.inner.execute(container, user, cmd);
  }

  ownKernel(runtime: string | undefined): Promise<boolean> {
    return this.inner.ownKernel(runtime);
  }

  top(container: string): Promise<HostProcess[]> {
    return this.inner.top(container);
  }

  listByLabel(key: string, value: string): Promise<ContainerSummary[]> {
    return this.inner.listByLabel(key, value);
  }

  createNetwork(options: NetworkCreateOptions): Promise<boolean> {
    return this.inner.createNetwork(options);
  }

  inspectNetwork(name: string): Promise<NetworkState> {
    return this.inner.inspectNetwork(name);
  }

  inspectImage(name: string): Promise<void> {
    return this.inner.inspectImage(name);
  }
}
