import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { SANDBOX_USER } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import { applyInstallerFirewall, removeInstallerRule } from './installer-firewall';
import { RegistryProxy } from './registry-proxy';

/** An install that failed: the installer's message, for the run's stderr. */
export class InstallFailed extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
    this.name = 'InstallFailed';
  }
}

export interface InstallerSettings {
  image: string;
  /** The Docker network of installers: internal (no route out), made if missing. */
  network: string;
  /** The registry npm installs from, and the only place the installer reaches. */
  registry: URL;
  /** The node's npm cache: a Docker volume, written by installers only. */
  cacheVolume: string;
  /** The labels the cache volume is made with (whose node it is). */
  cacheVolumeLabels: Record<string, string>;
  /** The label that marks this node's installer containers (removed if left over). */
  label: { key: string; value: string };
  /** The operator's CA bundle for the registry (read-only in the installer). */
  extraCaCertsPath: string | undefined;
  /** Whether the host's firewall lets installers reach this agent's proxy only. */
  firewall: boolean;
  nodeId: string;
}

/** Largest bundle an installer may produce. */
const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;
/** Largest error output kept from npm. */
const MAX_STDERR_BYTES = 64 * 1024;
const MIB = 1024 * 1024;
const CA_IN_INSTALLER = '/etc/sandbox/extra-ca-certificates.pem';
/** The installer's home: the cache volume (npm's cache is ~/.npm). */
const HOME = '/home/sandbox';

/** npm in a fresh directory, then node_modules as a tar.gz on stdout; npm's output on stderr. */
const INSTALL_SCRIPT = [
  'set -e',
  'mkdir -p /tmp/work && cd /tmp/work',
  `printf '{"private":true}\\n' > package.json`,
  'npm install --ignore-scripts --no-audit --no-fund --no-update-notifier --no-package-lock' +
    ' --loglevel=error --prefer-offline --git=/bin/false "$@" >&2',
  'tar -czf - node_modules',
].join('\n');

/**
 * What an installer container is: the sandbox image as the sandbox user, no capability, a
 * read-only root, no session's workspace and no host path (the node's npm cache is a volume
 * of its own; the CA bundle, if any, read-only), none of the agent's environment, and a
 * network whose only way out is the registry proxy.
 */
export function installerSpec(
  settings: InstallerSettings,
  proxy: string,
  specs: readonly string[],
): Docker.ContainerCreateOptions {
  const env = [
    `HOME=${HOME}`,
    `npm_config_registry=${settings.registry.href}`,
    `npm_config_proxy=${proxy}`,
    `npm_config_https_proxy=${proxy}`,
    'npm_config_noproxy=',
    'npm_config_update_notifier=false',
  ];
  const binds: string[] = [];
  if (settings.extraCaCertsPath !== undefined) {
    binds.push(`${settings.extraCaCertsPath}:${CA_IN_INSTALLER}:ro`);
    env.push(`NODE_EXTRA_CA_CERTS=${CA_IN_INSTALLER}`);
  }
  return {
    Image: settings.image,
    User: SANDBOX_USER,
    WorkingDir: '/tmp',
    Cmd: ['sh', '-c', INSTALL_SCRIPT, 'install', ...specs],
    Env: env,
    Labels: { [settings.label.key]: settings.label.value },
    AttachStdout: true,
    AttachStderr: true,
    NetworkDisabled: false,
    HostConfig: {
      Init: true,
      Privileged: false,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=2g,mode=1777' },
      Mounts: [{ Type: 'volume', Source: settings.cacheVolume, Target: HOME }],
      Binds: binds,
      Memory: 3072 * MIB,
      MemorySwap: 3072 * MIB,
      NanoCpus: 1e9,
      PidsLimit: 256,
      IpcMode: 'private',
      NetworkMode: settings.network,
      RestartPolicy: { Name: 'no' },
    },
  };
}

/**
 * Runs npm for the node's package cache in a throwaway container per install (installerSpec),
 * reaching the registry through a RegistryProxy: a package's dependency that names another
 * address (an http(s) tarball, git) is refused by the proxy, and the install fails with npm's
 * message. Nothing of a package runs (`--ignore-scripts`), on the node or in the installer.
 */
export class ContainerInstaller {
  private ready: Promise<string> | undefined;
  private proxy: RegistryProxy | undefined;

  constructor(
    private readonly docker: Docker,
    private readonly settings: InstallerSettings,
    private readonly logger: Logger,
  ) {}

  /** The tar.gz of node_modules with `specs` installed; throws InstallFailed. */
  async install(specs: readonly string[], timeoutMs: number): Promise<Buffer> {
    const proxy = await this.prepare();
    const container = await this.docker.createContainer(installerSpec(this.settings, proxy, specs));
    try {
      return await this.runToEnd(container, specs, timeoutMs);
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /** The network, the proxy on its gateway, leftovers of an earlier agent gone; once. */
  prepare(): Promise<string> {
    this.ready ??= this.setUp().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  close(): void {
    this.proxy?.close();
    if (this.settings.firewall)
      void removeInstallerRule(this.settings.nodeId).catch(() => undefined);
  }

  private async setUp(): Promise<string> {
    await this.removeLeftovers();
    // Made here with its labels (a mount would make it without): it is found as the node's.
    await this.docker.createVolume({
      Name: this.settings.cacheVolume,
      Labels: this.settings.cacheVolumeLabels,
    });
    const { gateway, bridge } = await this.network();
    this.proxy = new RegistryProxy(this.settings.registry, this.logger);
    const port = await this.proxy.listen(gateway);
    if (this.settings.firewall) {
      await applyInstallerFirewall({ bridge, gateway, port, nodeId: this.settings.nodeId });
    } else {
      this.logger.warn('SANDBOX_EGRESS_FIREWALL=off: installers can reach this host');
    }
    return `http://${gateway}:${port}`;
  }

  private async removeLeftovers(): Promise<void> {
    const { key, value } = this.settings.label;
    const left = await this.docker.listContainers({
      all: true,
      filters: { label: [`${key}=${value}`] },
    });
    await Promise.all(
      left.map((c) =>
        this.docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined),
      ),
    );
  }

  /** The installer network's gateway address (the node's side of it) and bridge; made if missing. */
  private async network(): Promise<{ gateway: string; bridge: string }> {
    const name = this.settings.network;
    let info = await this.docker
      .getNetwork(name)
      .inspect()
      .catch(() => undefined);
    if (info === undefined) {
      await this.docker
        .createNetwork({ Name: name, Driver: 'bridge', Internal: true, CheckDuplicate: true })
        .catch((err: unknown) => {
          if ((err as { statusCode?: number }).statusCode !== 409) throw err; // made meanwhile
        });
      info = await this.docker.getNetwork(name).inspect();
    }
    if (info.Internal !== true) {
      throw new Error(
        `the installer network ${name} must be internal (docker network create --internal)`,
      );
    }
    const gateway = (info.IPAM?.Config ?? [])
      .map((c: { Gateway?: string }) => c.Gateway)
      .find(Boolean);
    if (gateway === undefined) throw new Error(`the installer network ${name} has no gateway`);
    const options = (info.Options ?? {}) as Record<string, string>;
    const bridge =
      options['com.docker.network.bridge.name'] ?? `br-${String(info.Id).slice(0, 12)}`;
    return { gateway, bridge };
  }

  private async runToEnd(
    container: Docker.Container,
    specs: readonly string[],
    timeoutMs: number,
  ): Promise<Buffer> {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let tooLarge = false;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_BUNDLE_BYTES) {
        tooLarge = true;
        container.kill().catch(() => undefined);
      } else out.push(chunk);
    });
    stderr.on('data', (chunk: Buffer) => {
      if (errBytes < MAX_STDERR_BYTES) err.push(chunk.subarray(0, MAX_STDERR_BYTES - errBytes));
      errBytes += chunk.length;
    });
    this.docker.modem.demuxStream(stream, stdout, stderr);
    const ended = new Promise<void>((resolve) => stream.on('end', resolve));
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        container.kill().catch(() => undefined);
      },
      Math.max(1, timeoutMs),
    );
    try {
      await container.start();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      // The rest of its output (the attach stream ends after the exit, not always at once).
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2000))]);
      const named = specs.join(' ');
      if (timedOut) throw new InstallFailed(`Installing ${named} timed out\n`, true);
      if (tooLarge) throw new InstallFailed(`Installing ${named} failed: over 512 MB\n`, false);
      if (StatusCode !== 0) {
        const detail = Buffer.concat(err).toString('utf8').trim() || `exit code ${StatusCode}`;
        throw new InstallFailed(`Installing ${named} failed:\n${detail}\n`, false);
      }
      return Buffer.concat(out);
    } finally {
      clearTimeout(timer);
    }
  }
}
