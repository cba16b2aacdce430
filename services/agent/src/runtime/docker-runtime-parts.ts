import type { AgentConfig } from '@sandbox/config';
import type { CachedContainers } from './docker/cached-containers';
import type { CpuSplitContainers } from './docker/cpu-split-containers';
import type { EngineWatch } from './docker/engine-watch';
import type { HostNetwork } from './docker/host-setup';
import type { RunnerLinkContainers } from './docker/runner-link-containers';
import type { LifecycleDeps } from './lifecycle/lifecycle-deps';
import type { PackageInstaller } from './packages/package-installer';
import type { WarmPool } from './pool/warm-pool';
import type { ProcessLogs } from './processes/process-logs';
import type { RequestLoad } from './request-load';
import type { RunnerPool } from './runner/runner-pool';

/** The collaborators of a `DockerRuntime` (`createDockerRuntime` builds the real ones). */
export interface DockerRuntimeParts extends LifecycleDeps {
  runners: RunnerPool;
  pool?: WarmPool | undefined;
  /** The requests being served (the pool refills at a slower pace meanwhile). */
  load?: RequestLoad | undefined;
  /** The container state cache behind `containers`, when there is one. */
  cache?: CachedContainers | undefined;
  /** `containers` when sessions' CPU limits bind their own processes only. */
  cpuSplit?: CpuSplitContainers | undefined;
  /** Where runners reach the agent's sockets (ADR 33); absent in tests without Docker. */
  links?: RunnerLinkContainers | undefined;
  /** Tells when the engine stops answering (Docker 20.10's libnetwork deadlock). */
  engine?: EngineWatch | undefined;
  installer: PackageInstaller;
  /** Every run's output, kept on the node's disk. */
  logs: ProcessLogs;
  /** Makes sure the image, the network and its firewall are there. */
  prepareHost(): Promise<HostNetwork>;
  /**
   * Starts the egress proxy and DNS filter of domain rules on the host's side of the sandbox
   * network (`dnsServers`: the host's resolvers, where allowed names are asked by default).
   */
  startEgressProxy?(gateway: string, dnsServers: readonly string[]): Promise<void>;
  stopEgressProxy?(): void;
  config: LifecycleDeps['config'] & Pick<AgentConfig, 'diskQuota' | 'maxRunsPerSession'>;
}
