import { basename } from 'node:path';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import type Docker from 'dockerode';
import type { Logger } from '@sandbox/logger';
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
import { statusCode } from './docker-names';

/** gVisor's runtime binary: its Sentry is a kernel of the container's own. */
const OWN_KERNEL_RUNTIME = 'runsc';

function stateOf(info: Docker.ContainerInspectInfo, ownKernel: boolean): ContainerState {
  const addresses: Record<string, string | undefined> = {};
  for (const [name, network] of Object.entries(info.NetworkSettings.Networks)) {
    addresses[name] = network.IPAddress;
  }
  return {
    id: info.Id,
    running: info.State.Running,
    paused: info.State.Paused,
    status: info.State.Status,
    pid: info.State.Pid,
    ownKernel,
    memoryBytes: info.HostConfig.Memory ?? 0,
    pidsLimit: info.HostConfig.PidsLimit ?? 0,
    addresses,
    labels: info.Config.Labels ?? {},
  };
}

/** The Docker Engine API through dockerode. */
export class DockerodeContainerClient implements ContainerClient {
  /** The path of each OCI runtime the engine knows, by name (asked once). */
  private runtimes: Promise<Record<string, string>> | undefined;

  constructor(
    private readonly docker: Docker,
    private readonly logger: Logger,
  ) {}

  /** Runs one Docker call; a failure is logged with what it was about, and rethrown. */
  private async call<T>(
    what: string,
    subject: Record<string, string>,
    work: () => Promise<T>,
  ): Promise<T> {
    try {
      return await work();
    } catch (err) {
      this.logger.debug({ err, ...subject, status: statusCode(err) }, `docker ${what} failed`);
      throw err;
    }
  }

  async find(container: string): Promise<ContainerState | undefined> {
    try {
      const info = await this.docker.getContainer(container).inspect();
      return stateOf(info, await this.ownKernel(info.HostConfig.Runtime));
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      this.logger.debug({ err, container }, 'docker inspect failed');
      throw err;
    }
  }

  createAndStart(options: ContainerCreateOptions): Promise<string> {
    return this.call('create', { container: options.name ?? '' }, async () => {
      const container = await this.docker.createContainer(options);
      await container.start();
      return container.id;
    });
  }

  async remove(container: string): Promise<boolean> {
    try {
      await this.docker.getContainer(container).remove({ force: true, v: true });
      return true;
    } catch (err) {
      if (statusCode(err) === 404) return false;
      this.logger.debug({ err, container }, 'docker remove failed');
      throw err;
    }
  }

  async disconnect(container: string, network: string): Promise<boolean> {
    try {
      await this.docker.getNetwork(network).disconnect({ Container: container, Force: false });
      return true;
    } catch (err) {
      if (statusCode(err) === 404) return false;
      this.logger.debug({ err, container, network }, 'docker network disconnect failed');
      throw err;
    }
  }

  pause(container: string): Promise<void> {
    return this.call('pause', { container }, () => this.docker.getContainer(container).pause());
  }

  unpause(container: string): Promise<void> {
    return this.call('unpause', { container }, () => this.docker.getContainer(container).unpause());
  }

  rename(container: string, name: string): Promise<void> {
    return this.call('rename', { container, name }, async () => {
      await this.docker.getContainer(container).rename({ name });
    });
  }

  updateLimits(container: string, limits: ContainerLimits): Promise<void> {
    return this.call('update', { container }, async () => {
      await this.docker.getContainer(container).update({
        Memory: limits.memoryBytes,
        MemorySwap: limits.memoryBytes,
        NanoCpus: limits.nanoCpus,
        PidsLimit: limits.pidsLimit,
      });
    });
  }

  start(container: string): Promise<void> {
    return this.call('start', { container }, () =>
      this.docker
        .getContainer(container)
        .start()
        .catch((err: unknown) => {
          if (statusCode(err) !== 304) throw err; // 304: already started
        }),
    );
  }

  top(container: string): Promise<HostProcess[]> {
    return this.call('top', { container }, async () => {
      const top = (await this.docker
        .getContainer(container)
        .top({ ps_args: '-o pid,ppid,args' })) as { Processes?: string[][] };
      return (top.Processes ?? []).map(([pid, ppid, ...args]) => ({
        pid: Number(pid),
        ppid: Number(ppid),
        args: args.join(' '),
      }));
    });
  }

  async execute(
    container: string,
    user: string,
    cmd: string[],
  ): Promise<{ code: number; stdout: string }> {
    return this.call('exec', { container }, async () => {
      const exec = await this.docker
        .getContainer(container)
        .exec({ Cmd: cmd, User: user, AttachStdout: true, AttachStderr: true });
      const stream = await exec.start({ hijack: true, stdin: false });
      const stdout = new PassThrough();
      const chunks: Buffer[] = [];
      stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      this.docker.modem.demuxStream(stream, stdout, new PassThrough().resume());
      await finished(stream).catch(() => undefined);
      const { ExitCode } = await exec.inspect();
      return { code: ExitCode ?? -1, stdout: Buffer.concat(chunks).toString('utf8') };
    });
  }

  async ownKernel(runtime: string | undefined): Promise<boolean> {
    if (runtime === undefined || runtime === '' || runtime === 'runc') return false;
    this.runtimes ??= this.docker
      .info()
      .then((info: { Runtimes?: Record<string, { path?: string }> }) =>
        Object.fromEntries(
          Object.entries(info.Runtimes ?? {}).map(([name, r]) => [name, r.path ?? '']),
        ),
      );
    const known = await this.runtimes.catch((err: unknown) => {
      this.runtimes = undefined;
      throw err;
    });
    // Docker names a runtime by its path when it is not in its configuration.
    const path = known[runtime] ?? runtime;
    return basename(path) === OWN_KERNEL_RUNTIME;
  }

  listByLabel(key: string, value: string): Promise<ContainerSummary[]> {
    return this.call('list', { label: `${key}=${value}` }, async () => {
      const containers = await this.docker.listContainers({
        all: true,
        filters: { label: [`${key}=${value}`] },
      });
      return containers.map((c) => ({
        id: c.Id,
        name: (c.Names[0] ?? '').replace(/^\//, ''),
        labels: c.Labels,
        state: c.State,
        imageId: c.ImageID,
      }));
    });
  }

  async createNetwork(options: NetworkCreateOptions): Promise<boolean> {
    try {
      await this.docker.createNetwork(options);
      return true;
    } catch (err) {
      if (statusCode(err) === 409) return false; // it exists
      this.logger.debug({ err, network: options.Name }, 'docker network create failed');
      throw err;
    }
  }

  inspectNetwork(name: string): Promise<NetworkState> {
    return this.call('network inspect', { network: name }, async () => {
      const info = (await this.docker.getNetwork(name).inspect()) as {
        Id: string;
        Options?: Record<string, string>;
        IPAM?: { Config?: Array<{ Gateway?: string }> };
        Containers?: Record<string, { IPv4Address?: string }>;
      };
      const addresses = Object.values(info.Containers ?? {})
        .map((c) => (c.IPv4Address ?? '').split('/')[0] ?? '')
        .filter((address) => address !== '');
      const gateway = (info.IPAM?.Config ?? []).map((c) => c.Gateway).find((g) => g?.includes('.'));
      return {
        id: info.Id,
        options: info.Options ?? {},
        addresses,
        ...(gateway === undefined ? {} : { gateway }),
      };
    });
  }

  inspectImage(name: string): Promise<string> {
    return this.call('image inspect', { image: name }, async () => {
      return (await this.docker.getImage(name).inspect()).Id;
    });
  }
}
