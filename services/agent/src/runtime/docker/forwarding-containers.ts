import type { ContainerClient } from './container-client';

/** The arguments of a call of the container client. */
type Args<Call extends keyof ContainerClient> = Parameters<ContainerClient[Call]>;

/**
 * A container client that passes every call to `inner`: the base of the clients that change
 * a few calls (the state cache, the CPU split) and leave the rest as Docker answers them.
 * The signatures are the interface's own, so that a change there needs none here.
 */
export class ForwardingContainers implements ContainerClient {
  constructor(protected readonly inner: ContainerClient) {}

  find(...args: Args<'find'>) {
    return this.inner.find(...args);
  }

  createAndStart(...args: Args<'createAndStart'>) {
    return this.inner.createAndStart(...args);
  }

  remove(...args: Args<'remove'>) {
    return this.inner.remove(...args);
  }

  disconnect(...args: Args<'disconnect'>) {
    return this.inner.disconnect(...args);
  }

  pause(...args: Args<'pause'>) {
    return this.inner.pause(...args);
  }

  unpause(...args: Args<'unpause'>) {
    return this.inner.unpause(...args);
  }

  rename(...args: Args<'rename'>) {
    return this.inner.rename(...args);
  }

  updateLimits(...args: Args<'updateLimits'>) {
    return this.inner.updateLimits(...args);
  }

  start(...args: Args<'start'>) {
    return this.inner.start(...args);
  }

  execute(...args: Args<'execute'>) {
    return this.inner.execute(...args);
  }

  ownKernel(...args: Args<'ownKernel'>) {
    return this.inner.ownKernel(...args);
  }

  top(...args: Args<'top'>) {
    return this.inner.top(...args);
  }

  listByLabel(...args: Args<'listByLabel'>) {
    return this.inner.listByLabel(...args);
  }

  createNetwork(...args: Args<'createNetwork'>) {
    return this.inner.createNetwork(...args);
  }

  inspectNetwork(...args: Args<'inspectNetwork'>) {
    return this.inner.inspectNetwork(...args);
  }

  inspectImage(...args: Args<'inspectImage'>) {
    return this.inner.inspectImage(...args);
  }
}
