import type {
  ContainerClient,
  ContainerCreateOptions,
  ContainerLimits,
  ContainerState,
  ContainerSummary,
  HostProcess,
  NetworkCreateOptions,
  NetworkState,
} from '../docker/container-client';
import { containerName } from '../docker/docker-names';
import { dockerError, testConfig, type Journal } from './test-fixtures';

interface FakeContainer {
  state: ContainerState;
  labels: Record<string, string>;
  options: ContainerCreateOptions;
  imageId: string;
}

/** The id of the image the agent's configuration names (`sandboxImage`), here. */
export const CURRENT_IMAGE_ID = 'sha256:current';

export class FakeContainers implements ContainerClient {
  readonly byName = new Map<string, FakeContainer>();
  /** The next `createAndStart` rejects with this. */
  failCreate: Error | undefined;
  /** The next `rename` rejects with this. */
  failRename: Error | undefined;
  /** The next `remove` rejects with this. */
  failRemove: Error | undefined;
  private nextId = 1;

  constructor(private readonly journal: Journal) {}

  /** A container of the session in `status` (running, paused, exited...), made behind our back. */
  put(sessionId: string, status: string, labels: Record<string, string> = {}): ContainerState {
    const state: ContainerState = {
      id: `ctr-${this.nextId++}`,
      running: status === 'running' || status === 'paused',
      paused: status === 'paused',
      status,
      pid: 4242,
      ownKernel: false,
      memoryBytes: 0,
      pidsLimit: 0,
      addresses: { [testConfig.sandboxNetwork]: `172.30.0.${this.nextId}` },
      labels,
    };
    this.byName.set(containerName(sessionId), {
      state,
      labels,
      options: {},
      imageId: CURRENT_IMAGE_ID,
    });
    return state;
  }

  private entry(container: string): FakeContainer | undefined {
    return (
      this.byName.get(container) ?? [...this.byName.values()].find((c) => c.state.id === container)
    );
  }

  private sessionOf(container: string): string {
    const name = [...this.byName.entries()].find(
      ([key, c]) => key === container || c.state.id === container,
    )?.[0];
    return (name ?? container).replace(/^sbx-/, '');
  }

  find(container: string): Promise<ContainerState | undefined> {
    const found = this.entry(container);
    return Promise.resolve(found === undefined ? undefined : { ...found.state });
  }

  createAndStart(options: ContainerCreateOptions): Promise<string> {
    const name = options.name ?? '';
    this.journal.push(`container.create ${name.replace(/^sbx-/, '')}`);
    const failure = this.failCreate;
    this.failCreate = undefined;
    if (failure !== undefined) return Promise.reject(failure);
    if (this.byName.has(name)) return Promise.reject(dockerError(409));
    const state = this.put(name.replace(/^sbx-/, ''), 'running', options.Labels ?? {});
    this.byName.get(name)!.options = options;
    return Promise.resolve(state.id);
  }

  remove(container: string): Promise<boolean> {
    this.journal.push(`container.remove ${this.sessionOf(container)}`);
    const failure = this.failRemove;
    this.failRemove = undefined;
    if (failure !== undefined) return Promise.reject(failure);
    const found = this.entry(container);
    if (found === undefined) return Promise.resolve(false);
    for (const [name, c] of this.byName) if (c === found) this.byName.delete(name);
    return Promise.resolve(true);
  }

  disconnect(container: string, network: string): Promise<boolean> {
    this.journal.push(`container.disconnect ${this.sessionOf(container)} ${network}`);
    const found = this.entry(container);
    if (found?.state.addresses[network] === undefined) return Promise.resolve(false);
    const { [network]: _left, ...rest } = found.state.addresses;
    found.state.addresses = rest;
    return Promise.resolve(true);
  }

  private set(container: string, step: string, change: Partial<ContainerState>): Promise<void> {
    this.journal.push(`container.${step} ${this.sessionOf(container)}`);
    const found = this.entry(container);
    if (found === undefined) return Promise.reject(dockerError(404));
    Object.assign(found.state, change);
    return Promise.resolve();
  }

  rename(container: string, name: string): Promise<void> {
    this.journal.push(`container.rename ${this.sessionOf(container)} ${name.replace(/^sbx-/, '')}`);
    const failure = this.failRename;
    this.failRename = undefined;
    if (failure !== undefined) return Promise.reject(failure);
    const found = this.entry(container);
    if (found === undefined) return Promise.reject(dockerError(404));
    if (this.byName.has(name)) return Promise.reject(dockerError(409));
    for (const [key, c] of this.byName) if (c === found) this.byName.delete(key);
    this.byName.set(name, found);
    return Promise.resolve();
  }

  updateLimits(container: string, limits: ContainerLimits): Promise<void> {
    this.journal.push(`container.update ${this.sessionOf(container)}`);
    const found = this.entry(container);
    if (found === undefined) return Promise.reject(dockerError(404));
    found.state.memoryBytes = limits.memoryBytes;
    found.state.pidsLimit = limits.pidsLimit;
    return Promise.resolve();
  }

  pause(container: string): Promise<void> {
    return this.set(container, 'pause', { paused: true, status: 'paused' });
  }

  unpause(container: string): Promise<void> {
    return this.set(container, 'unpause', { paused: false, status: 'running' });
  }

  start(container: string): Promise<void> {
    return this.set(container, 'start', { running: true, status: 'running' });
  }

  top(): Promise<HostProcess[]> {
    return Promise.resolve([]);
  }

  execute(): Promise<{ code: number; stdout: string }> {
    return Promise.resolve({ code: 0, stdout: '' });
  }

  ownKernel(_runtime: string | undefined): Promise<boolean> {
    return Promise.resolve(false);
  }

  listByLabel(key: string, value: string): Promise<ContainerSummary[]> {
    return Promise.resolve(
      [...this.byName.entries()]
        .filter(([, c]) => c.labels[key] === value)
        .map(([name, c]) => ({
          id: c.state.id,
          name,
          labels: c.labels,
          state: c.state.status,
          imageId: c.imageId,
        })),
    );
  }

  createNetwork(_options: NetworkCreateOptions): Promise<boolean> {
    return Promise.resolve(false);
  }

  inspectNetwork(name: string): Promise<NetworkState> {
    return Promise.resolve({ id: name, options: {} });
  }

  /** The session's container was made from image `imageId` (an older one, say). */
  setImage(sessionId: string, imageId: string): void {
    const found = this.byName.get(containerName(sessionId));
    if (found !== undefined) found.imageId = imageId;
  }

  inspectImage(_name: string): Promise<string> {
    return Promise.resolve(CURRENT_IMAGE_ID);
  }
}
