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
  /**
   * The container runs on a kernel of its own (gVisor's Sentry): its processes are not the
   * host's, so the host can neither see, signal nor regroup them; its pids are its own.
   */
  ownKernel: boolean;
  memoryBytes: number;
  pidsLimit: number;
  /** The container's address on each of its networks. */
  addresses: Record<string, string | undefined>;
  labels: Record<string, string>;
}

/** One container of a listing. */
export interface ContainerSummary {
  id: string;
  /** Without Docker's leading slash. */
  name: string;
  labels: Record<string, string>;
  /** created, running, paused, exited... */
  state: string;
  /** The id of the image it was made from (`sha256:…`). */
  imageId: string;
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
  /** The host's address on the network (its IPv4 gateway), if it has one. */
  gateway?: string;
  /** The IPv4 addresses of the containers on the network now. */
  addresses?: string[];
}

/** The limits of a container that can change while it runs. */
export interface ContainerLimits {
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
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
  /**
   * Takes the container off `network` (a running one leaves it at once); false when the
   * container or the network is absent.
   */
  disconnect(container: string, network: string): Promise<boolean>;
  pause(container: string): Promise<void>;
  unpause(container: string): Promise<void>;
  /** Gives the container another name. A name in use rejects with status 409. */
  rename(container: string, name: string): Promise<void>;
  /** Changes a (running) container's memory, CPU and process limits. */
  updateLimits(container: string, limits: ContainerLimits): Promise<void>;
  /** Starts a stopped container; one already running is fine. */
  start(container: string): Promise<void>;
  /** The container's processes, with host pids (not for a container with `ownKernel`). */
  top(container: string): Promise<HostProcess[]>;
  /** Runs `cmd` in the running container as `user` (docker exec); its exit code and stdout. */
  execute(
    container: string,
    user: string,
    cmd: string[],
  ): Promise<{ code: number; stdout: string }>;
  /** Whether containers of this OCI runtime (Docker's default when undefined) have `ownKernel`. */
  ownKernel(runtime: string | undefined): Promise<boolean>;
  /** Every container (running or not) carrying the label `key=value`. */
  listByLabel(key: string, value: string): Promise<ContainerSummary[]>;
  /** Creates a network; false when one of that name exists already. */
  createNetwork(options: NetworkCreateOptions): Promise<boolean>;
  inspectNetwork(name: string): Promise<NetworkState>;
  /** The image's id (`sha256:…`); rejects when the image is not on this host. */
  inspectImage(name: string): Promise<string>;
}
