import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { SANDBOX_GID, SANDBOX_UID, SANDBOX_USER, type RunResult } from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { containerName, sandboxLabelKeys, statusCode } from './docker-names';
import type { RunnerClient } from './runner-client';
import * as runnerOps from './runner-operations';
import { applyEgressFirewall, hostNameservers } from './egress-firewall';
import { killAllInContainer, userProcessesOf } from './kill-all';
import { createBlobStore, type BlobStore } from './blob-store';
import { isFull, limitsExceeded, readLimitCounters } from './limit-watch';
import { PackageInstaller } from './package-installer';
import { RunnerPool } from './runner-pool';
import { SandboxSpecs } from './sandbox-specs';
import { LoopWorkspaces, VolumeWorkspaces, type WorkspaceStore } from './workspaces';
import { countFiles } from './workspace-archive';
import type {
  ByteSink,
  ExecSpec,
  FileContent,
  FileListing,
  ListPage,
  SandboxInfo,
  SandboxRuntime,
  SandboxSpec,
} from './sandbox-runtime';

const MIB = 1024 * 1024;
const EXTRA_CA_IN_SANDBOX = '/etc/sandbox/extra-ca-certificates.pem';

export interface DockerRuntimeOptions {
  config: AgentConfig;
  logger: Logger;
  docker?: Docker;
}

/** Sandboxes as hardened Docker containers, each with its own workspace volume. */
export class DockerRuntime implements SandboxRuntime {
  private readonly docker: Docker;
  private readonly config: AgentConfig;
  private readonly logger: Logger;
  private readonly labels: ReturnType<typeof sandboxLabelKeys>;
  private readonly runners: RunnerPool;
  private readonly workspaces: WorkspaceStore;
  private readonly installer: PackageInstaller;
  private readonly blobs: BlobStore;
  /** Lifecycle transitions of one session never overlap. */
  private readonly transitions = new Map<string, Promise<unknown>>();
  private readonly specs: SandboxSpecs;

  constructor(options: DockerRuntimeOptions) {
    this.config = options.config;
    this.logger = options.logger;
    this.docker = options.docker ?? new Docker({ socketPath: options.config.dockerSocket });
    this.labels = sandboxLabelKeys(options.config.labelPrefix);
    this.runners = new RunnerPool(this.docker, this.logger);
    this.blobs = createBlobStore(options.config);
    this.specs = new SandboxSpecs(join(options.config.workspaceDir, '.specs'));
    this.installer = new PackageInstaller({
      cacheDir: options.config.packageCacheDir,
      npmCommand: options.config.npmCommand,
      extraCaCertsPath: options.config.extraCaCertsPath,
      logger: this.logger,
    });
    this.workspaces =
      options.config.diskQuota === 'loop'
        ? new LoopWorkspaces(options.config.workspaceDir, this.logger)
        : new VolumeWorkspaces(this.docker);
  }

  async prepare(): Promise<void> {
    try {
      await this.docker.getImage(this.config.sandboxImage).inspect();
    } catch (err) {
      throw new AppError(
        'service_unavailable',
        `Sandbox image ${this.config.sandboxImage} is missing; run scripts/build-sandbox-image`,
        { cause: err, retryAfter: 30 },
      );
    }
    await this.ensureFirewall(await this.ensureNetwork());
  }

  /** The sandbox network (created if missing, without inter-container traffic); its bridge. */
  private async ensureNetwork(): Promise<string> {
    const name = this.config.sandboxNetwork;
    try {
      await this.docker.createNetwork({
        Name: name,
        Driver: 'bridge',
        CheckDuplicate: true,
        Labels: { [this.labels.managed]: 'true' },
        // Sandboxes must not talk to each other.
        Options: { 'com.docker.network.bridge.enable_icc': 'false' },
      });
      this.logger.info({ network: name }, 'created sandbox network');
    } catch (err) {
      if (statusCode(err) !== 409) throw err; // it exists
    }
    const info = (await this.docker.getNetwork(name).inspect()) as {
      Id: string;
      Options?: Record<string, string>;
    };
    if (info.Options?.['com.docker.network.bridge.enable_icc'] !== 'false') {
      throw new AppError(
        'service_unavailable',
        `Docker network ${name} lets containers talk to each other; remove it so the agent can recreate it`,
      );
    }
    return info.Options['com.docker.network.bridge.name'] ?? `br-${info.Id.slice(0, 12)}`;
  }

  /** Sandboxes reach the internet, never this host, private ranges or metadata services. */
  private async ensureFirewall(bridge: string): Promise<void> {
    if (!this.config.egressFirewall) {
      this.logger.warn(
        'SANDBOX_EGRESS_FIREWALL=off: sandboxes can reach this host and private networks',
      );
      return;
    }
    await applyEgressFirewall({
      bridge,
      dnsServers: await hostNameservers(),
      allow: this.config.egressAllow,
    });
    this.logger.info({ bridge }, 'sandbox egress firewall applied');
  }

  private sandboxLabels(spec: SandboxSpec): Record<string, string> {
    return {
      [this.labels.managed]: 'true',
      [this.labels.session]: spec.sessionId,
      [this.labels.account]: spec.accountId,
      [this.labels.node]: this.config.nodeId,
    };
  }

  /** `keepWorkspace`: the disk holds the session's only copy (a rebuild): never remove it. */
  async create(spec: SandboxSpec, keepWorkspace = false): Promise<SandboxInfo> {
    const name = containerName(spec.sessionId);
    const existing = await this.findContainer(spec.sessionId);
    if (existing !== undefined) return this.inspect(spec.sessionId);
    // Docker refuses more CPU than the host has, which no retry would change.
    const hostCpus = availableParallelism();
    if (spec.limits.cpu > hostCpus) {
      throw new AppError('invalid_request', `resourceLimits.cpu is at most ${hostCpus} here`, {
        details: { field: 'resourceLimits.cpu', value: spec.limits.cpu, max: hostCpus },
      });
    }

    const labels = this.sandboxLabels(spec);
    const workspace = await this.workspaces.create(spec.sessionId, spec.limits.diskMb, labels);
    await this.specs.write(spec);

    const env = ['HOME=/home/sandbox'];
    const binds = [workspace];
    if (this.config.extraCaCertsPath !== undefined) {
      binds.push(`${this.config.extraCaCertsPath}:${EXTRA_CA_IN_SANDBOX}:ro`);
      env.push(`NODE_EXTRA_CA_CERTS=${EXTRA_CA_IN_SANDBOX}`);
    }
    const memoryBytes = spec.limits.memoryMb * MIB;
    try {
      const container = await this.docker.createContainer({
        name,
        Image: this.config.sandboxImage,
        User: SANDBOX_USER,
        WorkingDir: '/workspace',
        Env: env,
        Labels: labels,
        Cmd: ['sleep', 'infinity'],
        NetworkDisabled: false,
        HostConfig: {
          Init: true,
          Privileged: false,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges:true'],
          ReadonlyRootfs: true,
          Tmpfs: {
            '/tmp': 'rw,nosuid,nodev,size=512m,mode=1777',
            '/home/sandbox': `rw,nosuid,nodev,size=256m,uid=${SANDBOX_UID},gid=${SANDBOX_GID},mode=0755`,
          },
          Binds: binds,
          Memory: memoryBytes,
          MemorySwap: memoryBytes,
          NanoCpus: Math.round(spec.limits.cpu * 1e9),
          PidsLimit: spec.limits.pids > 0 ? spec.limits.pids : this.config.pidsLimit,
          // Open files per process: plenty for real work, not enough to exhaust kernel memory.
          Ulimits: [
            { Name: 'nofile', Soft: this.config.nofileLimit, Hard: this.config.nofileLimit },
          ],
          IpcMode: 'private',
          NetworkMode: this.config.sandboxNetwork,
          RestartPolicy: { Name: 'no' },
          ...(this.config.sandboxRuntime === undefined
            ? {}
            : { Runtime: this.config.sandboxRuntime }),
        },
      });
      await container.start();
      this.logger.info({ sessionId: spec.sessionId, containerId: container.id }, 'sandbox started');
      // Start the runner now, without waiting for it: the first run finds it ready.
      this.runners
        .get(spec.sessionId, container.id)
        .request({ op: 'ping' }, 'pong')
        .catch((err: unknown) =>
          this.logger.warn({ err, sessionId: spec.sessionId }, 'runner warm-up failed'),
        );
      return {
        sessionId: spec.sessionId,
        containerId: container.id,
        status: 'running',
        filesCount: 0,
        activeProcesses: 0,
      };
    } catch (err) {
      if (statusCode(err) === 409) return this.inspect(spec.sessionId); // created concurrently
      this.logger.error({ err, sessionId: spec.sessionId }, 'sandbox creation failed');
      await this.removeSandbox(spec.sessionId, keepWorkspace).catch((cleanupErr: unknown) =>
        this.logger.error({ err: cleanupErr, sessionId: spec.sessionId }, 'cleanup failed'),
      );
      throw new AppError('service_unavailable', 'Could not start the session sandbox', {
        cause: err,
        retryAfter: 5,
      });
    }
  }

  private async findContainer(sessionId: string): Promise<Docker.ContainerInspectInfo | undefined> {
    try {
      return await this.docker.getContainer(containerName(sessionId)).inspect();
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  /**
   * The session's running container. A paused one (idle) is thawed and a stopped or missing one
   * healed first, under the session's lock (`held`: the caller holds it already), so that this
   * never races a deep-sleep save or a removal. 404 when there is nothing to run.
   */
  private async requireRunning(
    sessionId: string,
    held = false,
  ): Promise<Docker.ContainerInspectInfo> {
    const info = await this.findContainer(sessionId);
    if (info !== undefined && info.State.Running && !info.State.Paused) return info;
    const bringBack = () => this.bringBack(sessionId);
    const running = held ? await bringBack() : await this.serialized(sessionId, bringBack);
    if (running === undefined) {
      throw new AppError('session_not_found', 'Session sandbox not found', {
        details: { sessionId },
      });
    }
    return running;
  }

  private async bringBack(sessionId: string): Promise<Docker.ContainerInspectInfo | undefined> {
    let info = await this.findContainer(sessionId);
    if (info === undefined || (!info.State.Running && !info.State.Paused)) {
      info = await this.heal(sessionId, info);
    }
    if (info?.State.Paused) {
      // A request for an idle sandbox wakes it.
      await this.docker
        .getContainer(info.Id)
        .unpause()
        .catch(() => undefined);
      info = await this.findContainer(sessionId);
    }
    return info !== undefined && info.State.Running && !info.State.Paused ? info : undefined;
  }

  /**
   * Brings back a sandbox that should run but does not: a container stopped by a reboot or a
   * crash (its disk mounted again first), or one removed behind the agent's back (rebuilt from
   * its recorded spec on the same workspace). Sleeping sessions are left to `restore`.
   * Returns the container, or undefined when there is nothing to bring back. The caller holds
   * the session's lock.
   */
  private async heal(
    sessionId: string,
    info: Docker.ContainerInspectInfo | undefined,
  ): Promise<Docker.ContainerInspectInfo | undefined> {
    if (info === undefined) {
      const spec = await this.specs.read(sessionId);
      if (spec === undefined || (await this.blobs.manifest(sessionId)) !== undefined) {
        return undefined;
      }
      if (!(await this.workspaces.attach(sessionId))) return undefined;
      this.logger.warn({ sessionId }, 'sandbox container vanished: rebuilding it on its disk');
      await this.create(spec, true);
    } else {
      // A session being destroyed (its spec already gone) is not started again.
      if ((await this.specs.read(sessionId)) === undefined) return undefined;
      if (!(await this.workspaces.attach(sessionId))) {
        this.logger.error({ sessionId }, 'a stopped sandbox has lost its workspace');
        return undefined;
      }
      this.logger.warn({ sessionId, state: info.State.Status }, 'sandbox was stopped: starting it');
      this.runners.close(sessionId);
      await this.docker
        .getContainer(info.Id)
        .start()
        .catch((err: unknown) => {
          if (statusCode(err) !== 304) throw err; // 304: already started
        });
    }
    return this.findContainer(sessionId);
  }

  /**
   * Desired state vs actual state, for this node: every sandbox the agent made and has not
   * removed runs (or stays paused). Run at start and then periodically.
   */
  async reconcile(): Promise<{ started: string[]; rebuilt: string[] }> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${this.labels.node}=${this.config.nodeId}`] },
    });
    const present = new Set<string>();
    const started: string[] = [];
    const rebuilt: string[] = [];
    const attempt = async (sessionId: string, into: string[]) => {
      try {
        const healed = await this.serialized(sessionId, async () =>
          this.heal(sessionId, await this.findContainer(sessionId)),
        );
        if (healed !== undefined) into.push(sessionId);
      } catch (err) {
        this.logger.error({ err, sessionId }, 'reconcile could not bring a sandbox back');
      }
    };
    for (const container of containers) {
      const sessionId = container.Labels[this.labels.session];
      if (sessionId === undefined) continue;
      present.add(sessionId);
      if (container.State === 'exited' || container.State === 'created') {
        await attempt(sessionId, started);
      }
    }
    for (const spec of await this.specs.list()) {
      if (!present.has(spec.sessionId)) await attempt(spec.sessionId, rebuilt);
    }
    if (started.length + rebuilt.length > 0) {
      this.logger.info({ started, rebuilt }, 'reconciled sandboxes');
    }
    return { started, rebuilt };
  }

  async inspect(sessionId: string): Promise<SandboxInfo> {
    const info = await this.findContainer(sessionId);
    if (info === undefined) {
      return { sessionId, containerId: '', status: 'missing', filesCount: 0, activeProcesses: 0 };
    }
    if (info.State.Paused) {
      // Idle: the runner is frozen too; count from the host, without waking anything.
      const top = (await this.docker
        .getContainer(info.Id)
        .top({ ps_args: '-o pid,ppid,args' })) as {
        Processes?: string[][];
      };
      const processes = (top.Processes ?? []).map(([pid, ppid, ...args]) => ({
        pid: Number(pid),
        ppid: Number(ppid),
        args: args.join(' '),
      }));
      return {
        sessionId,
        containerId: info.Id,
        status: 'paused',
        filesCount: await countFiles(await this.workspaces.hostPath(sessionId)),
        activeProcesses: userProcessesOf(processes, info.State.Pid).length,
      };
    }
    if (!info.State.Running) {
      return {
        sessionId,
        containerId: info.Id,
        status: 'missing',
        filesCount: 0,
        activeProcesses: 0,
      };
    }
    const stats = await this.runners.get(sessionId, info.Id).request({ op: 'stats' }, 'stats');
    return {
      sessionId,
      containerId: info.Id,
      status: 'running',
      filesCount: stats.filesCount,
      activeProcesses: stats.activeProcesses,
    };
  }

  /** Removes the session and every byte of its data, saved workspace included. */
  destroy(sessionId: string): Promise<boolean> {
    return this.serialized(sessionId, async () => {
      // The spec goes first: a removal cut short is never rebuilt by `reconcile`.
      await this.specs.remove(sessionId);
      const saved = await this.blobs.manifest(sessionId);
      await this.blobs.remove(sessionId);
      return (await this.removeSandbox(sessionId)) || saved !== undefined;
    });
  }

  /** Removes the container and its workspace (not a saved copy of it). */
  private async removeSandbox(sessionId: string, keepWorkspace = false): Promise<boolean> {
    this.runners.close(sessionId);
    let existed = false;
    try {
      await this.docker.getContainer(containerName(sessionId)).remove({ force: true, v: true });
      existed = true;
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
    if (!keepWorkspace && (await this.workspaces.destroy(sessionId))) existed = true;
    if (existed) this.logger.info({ sessionId }, 'sandbox destroyed');
    return existed;
  }

  /** The runner of a running sandbox; 404 session_not_found when there is none. */
  private async runnerOf(sessionId: string): Promise<RunnerClient> {
    const info = await this.requireRunning(sessionId);
    return this.runners.get(sessionId, info.Id);
  }

  async exec(spec: ExecSpec, sink: ByteSink, signal: AbortSignal): Promise<RunResult> {
    const info = await this.requireRunning(spec.sessionId);
    const runner = this.runners.get(spec.sessionId, info.Id);
    const before = await readLimitCounters(info.State.Pid);
    const outcome = await runnerOps.exec(
      {
        runner,
        installer: this.installer,
        logger: this.logger.child({ sessionId: spec.sessionId }),
      },
      spec,
      sink,
      signal,
    );
    const after = await readLimitCounters(info.State.Pid);
    const disk =
      this.config.diskQuota === 'loop'
        ? await isFull(await this.workspaces.hostPath(spec.sessionId)).catch(() => undefined)
        : undefined;
    const exceeded = limitsExceeded(before, after, disk, {
      memoryMb: Math.round((info.HostConfig.Memory ?? 0) / (1024 * 1024)),
      processes: info.HostConfig.PidsLimit ?? 0,
    });
    if (exceeded.length > 0)
      this.logger.info({ sessionId: spec.sessionId, exceeded }, 'run hit limits');
    return { ...outcome, limitsExceeded: exceeded };
  }

  async kill(sessionId: string, pid: number | undefined): Promise<number[]> {
    if (pid === undefined) {
      const info = await this.requireRunning(sessionId);
      return killAllInContainer(this.docker, info.Id);
    }
    return runnerOps.kill(await this.runnerOf(sessionId), pid);
  }

  async writeFile(sessionId: string, file: FileContent): Promise<{ path: string; size: number }> {
    return runnerOps.writeFile(await this.runnerOf(sessionId), file);
  }

  async readFile(
    sessionId: string,
    path: string,
    sink: ByteSink,
    signal: AbortSignal,
  ): Promise<number> {
    return runnerOps.readFile(await this.runnerOf(sessionId), path, sink, signal);
  }

  async listFiles(sessionId: string, path: string, page: ListPage): Promise<FileListing> {
    return runnerOps.listFiles(await this.runnerOf(sessionId), path, page);
  }

  async previewHost(sessionId: string): Promise<string> {
    const info = await this.requireRunning(sessionId);
    const address = info.NetworkSettings.Networks[this.config.sandboxNetwork]?.IPAddress;
    if (address === undefined || address === '') {
      throw new AppError('service_unavailable', 'The sandbox has no network address', {
        retryAfter: 1,
      });
    }
    return address;
  }

  private serialized<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.transitions.get(sessionId) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.transitions.set(sessionId, settled);
    void settled.then(() => {
      if (this.transitions.get(sessionId) === settled) this.transitions.delete(sessionId);
    });
    return next;
  }

  pause(sessionId: string): Promise<SandboxInfo> {
    return this.serialized(sessionId, async () => {
      const info = await this.findContainer(sessionId);
      if (info === undefined) throw new AppError('session_not_found', 'Session sandbox not found');
      if (!info.State.Paused) await this.docker.getContainer(info.Id).pause();
      return this.inspect(sessionId);
    });
  }

  resume(sessionId: string): Promise<SandboxInfo> {
    return this.serialized(sessionId, async () => {
      await this.requireRunning(sessionId, true);
      return this.inspect(sessionId);
    });
  }

  hibernate(sessionId: string): Promise<{ filesCount: number; bytes: number }> {
    return this.serialized(sessionId, async () => {
      const info = await this.findContainer(sessionId);
      if (info === undefined) {
        const saved = await this.blobs.manifest(sessionId);
        if (saved !== undefined) return { filesCount: saved.filesCount, bytes: saved.bytes };
        throw new AppError('session_not_found', 'Nothing to put to sleep for this session');
      }
      // Frozen processes cannot change files while they are saved.
      if (!info.State.Paused && info.State.Running) await this.docker.getContainer(info.Id).pause();
      // Never save an unmounted disk's empty mount point (after a reboot) as the workspace.
      if (!(await this.workspaces.attach(sessionId))) {
        throw new AppError('service_unavailable', 'The session disk is not available', {
          retryAfter: 30,
        });
      }
      const saved = await this.blobs.save(sessionId, await this.workspaces.hostPath(sessionId));
      await this.removeSandbox(sessionId);
      this.logger.info({ sessionId, ...saved }, 'sandbox in deep sleep');
      return { filesCount: saved.filesCount, bytes: saved.bytes };
    });
  }

  restore(spec: SandboxSpec): Promise<SandboxInfo> {
    return this.serialized(spec.sessionId, async () => {
      const existing = await this.findContainer(spec.sessionId);
      if (existing !== undefined) {
        await this.requireRunning(spec.sessionId, true);
        return this.inspect(spec.sessionId);
      }
      const saved = await this.blobs.manifest(spec.sessionId);
      if (saved === undefined) {
        throw new AppError('session_not_found', 'No saved workspace for this session');
      }
      // The workspace first (so that no process sees it half-restored), then the container.
      const labels = this.sandboxLabels(spec);
      await this.workspaces.create(spec.sessionId, spec.limits.diskMb, labels);
      await this.blobs.restore(spec.sessionId, await this.workspaces.hostPath(spec.sessionId));
      const info = await this.create(spec);
      await this.blobs.remove(spec.sessionId);
      this.logger.info({ sessionId: spec.sessionId }, 'sandbox woke from deep sleep');
      return info;
    });
  }

  async count(): Promise<number> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${this.labels.node}=${this.config.nodeId}`] },
    });
    return containers.length;
  }
}
