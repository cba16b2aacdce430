import type Docker from 'dockerode';

/** What the runtime reads of one container. */
export interface ContainerState {
  id: string;
  running: boolean;
  paused: boolean;
  /** Docker's word for the state: created, running, paused, exited... */
  status: string;
  /** The host pid of the container's init (0 when it does not run). */
  pid: number;
  memoryBytes: number;
  pidsLimit: number;
  /** The container's address on each of its networks. */
  addresses: Record<string, string | undefined>;
}

/** One container of a listing. */
export interface ContainerSummary {
  labels: Record<string, string>;
  /** created, running, paused, exited... */
  state: string;
}

/** A process of a container, as the host sees it. */
export interface HostProcess {
  pid: number;
  ppid: number;
  args: string;
}

export interface NetworkState {
  id: string;
  options: Record<string, string>;
}

export type ContainerCreateOptions = Docker.ContainerCreateOptions;
export type NetworkCreateOptions = Docker.NetworkCreateOptions;

/**
 * The Docker calls the runtime makes, and nothing else. A container is named by its name or
 * its id. Expected answers (a missing container, one already started) are results; every other
 * failure is logged with the container and rethrown.
 */
export interface ContainerClient {
  /** The container; undefined when there is none. */
  find(container: string): Promise<ContainerState | undefined>;
  /** Creates and starts a container; its id. A name in use rejects with status 409. */
  createAndStart(options: ContainerCreateOptions): Promise<string>;
  /** Removes the container (running or not) and its anonymous volumes; false when absent. */
  remove(container: string): Promise<boolean>;
  pause(container: string): Promise<void>;
  unpause(container: string): Promise<void>;
  /** Starts a stopped container; one already running is fine. */
  start(container: string): Promise<void>;
  /** The container's processes, with host pids. */
  top(container: string): Promise<HostProcess[]>;
  /** Every container (running or not) carrying the label `key=value`. */
  listByLabel(key: string, value: string): Promise<ContainerSummary[]>;
  /** Creates a network; false when one of that name exists already. */
  createNetwork(options: NetworkCreateOptions): Promise<boolean>;
  inspectNetwork(name: string): Promise<NetworkState>;
  /** Rejects when the image is not on this host. */
  inspectImage(name: string): Promise<void>;
}
