import { PassThrough } from 'node:stream';
import Docker from 'dockerode';
import { AppError } from '@sandbox/errors';
import type { AgentConfig } from '@sandbox/config';
import type { Logger } from '@sandbox/logger';
import { containerName, sandboxLabelKeys, workspaceVolumeName } from './docker-names';
import { killProcessTree } from './process-tree';
import type {
  ExecOutcome,
  ExecSink,
  ExecSpec,
  SandboxInfo,
  SandboxRuntime,
  SandboxSpec,
} from './sandbox-runtime';
import { parseSandboxStats, SANDBOX_STATS_SCRIPT } from './sandbox-stats';

const MIB = 1024 * 1024;
const SANDBOX_USER = '1000:1000';
const EXTRA_CA_IN_SANDBOX = '/etc/sandbox/extra-ca-certificates.pem';
/** Exit code reported for a run killed by its timeout (as coreutils `timeout`). */
export const TIMEOUT_EXIT_CODE = 124;

function statusCode(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null && 'statusCode' in err
    ? (err as { statusCode?: number }).statusCode
    : undefined;
}

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

  constructor(options: DockerRuntimeOptions) {
    this.config = options.config;
    this.logger = options.logger;
    this.docker = options.docker ?? new Docker({ socketPath: options.config.dockerSocket });
    this.labels = sandboxLabelKeys(options.config.labelPrefix);
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
    await this.ensureNetwork();
  }

  private async ensureNetwork(): Promise<void> {
    const name = this.config.sandboxNetwork;
    try {
      await this.docker.getNetwork(name).inspect();
      return;
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
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
      if (statusCode(err) !== 409) throw err; // created concurrently
    }
  }

  async create(spec: SandboxSpec): Promise<SandboxInfo> {
    const name = containerName(spec.sessionId);
    const existing = await this.findContainer(spec.sessionId);
    if (existing !== undefined) return this.inspect(spec.sessionId);

    const labels = {
      [this.labels.managed]: 'true',
      [this.labels.session]: spec.sessionId,
      [this.labels.account]: spec.accountId,
      [this.labels.node]: this.config.nodeId,
    };
    const volume = workspaceVolumeName(spec.sessionId);
    await this.docker.createVolume({ Name: volume, Labels: labels });

    const env = ['HOME=/home/sandbox'];
    const binds = [`${volume}:/workspace:rw`];
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
            '/home/sandbox': 'rw,nosuid,nodev,size=256m,uid=1000,gid=1000,mode=0755',
          },
          Binds: binds,
          Memory: memoryBytes,
          MemorySwap: memoryBytes,
          NanoCpus: Math.round(spec.limits.cpu * 1e9),
          PidsLimit: spec.limits.pids > 0 ? spec.limits.pids : this.config.pidsLimit,
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
    } catch (err) {
      if (statusCode(err) === 409) return this.inspect(spec.sessionId); // created concurrently
      this.logger.error({ err, sessionId: spec.sessionId }, 'sandbox creation failed');
      await this.destroy(spec.sessionId).catch((cleanupErr: unknown) =>
        this.logger.error({ err: cleanupErr, sessionId: spec.sessionId }, 'cleanup failed'),
      );
      throw new AppError('service_unavailable', 'Could not start the session sandbox', {
        cause: err,
        retryAfter: 5,
      });
    }
    return this.inspect(spec.sessionId);
  }

  private async findContainer(sessionId: string): Promise<Docker.ContainerInspectInfo | undefined> {
    try {
      return await this.docker.getContainer(containerName(sessionId)).inspect();
    } catch (err) {
      if (statusCode(err) === 404) return undefined;
      throw err;
    }
  }

  private async requireRunning(sessionId: string): Promise<Docker.ContainerInspectInfo> {
    const info = await this.findContainer(sessionId);
    if (info === undefined || !info.State.Running) {
      throw new AppError('session_not_found', 'Session sandbox not found', {
        details: { sessionId },
      });
    }
    return info;
  }

  async inspect(sessionId: string): Promise<SandboxInfo> {
    const info = await this.findContainer(sessionId);
    if (info === undefined) {
      return { sessionId, containerId: '', status: 'missing', filesCount: 0, activeProcesses: 0 };
    }
    if (info.State.Paused || !info.State.Running) {
      return {
        sessionId,
        containerId: info.Id,
        status: info.State.Paused ? 'paused' : 'missing',
        filesCount: 0,
        activeProcesses: 0,
      };
    }
    const output = await this.runQuiet(info.Id, ['sh', '-c', SANDBOX_STATS_SCRIPT]);
    return { sessionId, containerId: info.Id, status: 'running', ...parseSandboxStats(output) };
  }

  /** Runs a short internal command in the sandbox and returns its stdout. */
  private async runQuiet(containerId: string, cmd: string[]): Promise<string> {
    const exec = await this.docker.getContainer(containerId).exec({
      Cmd: cmd,
      User: SANDBOX_USER,
      AttachStdout: true,
      AttachStderr: true,
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    const stdout = new PassThrough();
    const chunks: Buffer[] = [];
    stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    this.docker.modem.demuxStream(stream, stdout, new PassThrough().resume());
    await new Promise<void>((resolve, reject) => {
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    return Buffer.concat(chunks).toString('utf8');
  }

  async destroy(sessionId: string): Promise<boolean> {
    let existed = false;
    try {
      await this.docker.getContainer(containerName(sessionId)).remove({ force: true, v: true });
      existed = true;
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
    try {
      await this.docker.getVolume(workspaceVolumeName(sessionId)).remove({ force: true });
      existed = true;
    } catch (err) {
      if (statusCode(err) !== 404) throw err;
    }
    if (existed) this.logger.info({ sessionId }, 'sandbox destroyed');
    return existed;
  }

  async exec(spec: ExecSpec, sink: ExecSink, signal: AbortSignal): Promise<ExecOutcome> {
    const info = await this.requireRunning(spec.sessionId);
    const started = process.hrtime.bigint();
    const exec = await this.docker.getContainer(info.Id).exec({
      Cmd: ['bash', '-c', spec.command],
      User: SANDBOX_USER,
      WorkingDir: spec.workingDir,
      Env: Object.entries(spec.env).map(([name, value]) => `${name}=${value}`),
      AttachStdout: true,
      AttachStderr: true,
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on('data', (chunk: Buffer) => sink.stdout(chunk));
    stderr.on('data', (chunk: Buffer) => sink.stderr(chunk));
    this.docker.modem.demuxStream(stream, stdout, stderr);

    let timedOut = false;
    const stop = async (): Promise<void> => {
      const { Pid } = await exec.inspect();
      if (Pid > 0) await killProcessTree(Pid);
      stream.destroy();
    };
    const onAbort = (): void => {
      stop().catch((err: unknown) => this.logger.warn({ err }, 'stopping a run failed'));
    };
    const timer = setTimeout(() => {
      timedOut = true;
      onAbort();
    }, spec.timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await new Promise<void>((resolve) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', resolve);
      });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
    const executionTimeMs = Number((process.hrtime.bigint() - started) / 1_000_000n);
    const { ExitCode } = await exec.inspect();
    return {
      exitCode: timedOut ? TIMEOUT_EXIT_CODE : (ExitCode ?? -1),
      executionTimeMs,
      // Measured per run by the in-sandbox runner (Execution issue); not available via docker exec.
      memoryUsedBytes: 0,
      cpuTimeMs: 0,
      timedOut,
    };
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

  async count(): Promise<number> {
    const containers = await this.docker.listContainers({
      all: true,
      filters: { label: [`${this.labels.node}=${this.config.nodeId}`] },
    });
    return containers.length;
  }
}
