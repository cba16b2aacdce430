import type { AgentConfig } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { ContainerClient } from './container-client';
import { sandboxLabelKeys } from './docker-names';
import { applyEgressFirewall, hostNameservers } from './egress-firewall';

export type HostSetupConfig = Pick<
  AgentConfig,
  'sandboxImage' | 'sandboxNetwork' | 'labelPrefix' | 'egressFirewall' | 'egressAllow'
>;

export interface HostSetupDeps {
  containers: ContainerClient;
  config: HostSetupConfig;
  logger: Logger;
}

/** What `prepareHost` found: the host's address on the sandbox network, if it has one. */
export interface HostNetwork {
  gateway?: string;
  /** The host's resolvers (IPv4), which Docker's DNS forwards sandboxes' queries to. */
  dnsServers: string[];
}

/** What this host needs before any sandbox: the image, the sandbox network, its firewall. */
export async function prepareHost(deps: HostSetupDeps): Promise<HostNetwork> {
  const { containers, config } = deps;
  try {
    await containers.inspectImage(config.sandboxImage);
  } catch (err) {
    throw new AppError(
      'service_unavailable',
      `Sandbox image ${config.sandboxImage} is missing; run scripts/build-sandbox-image`,
      { cause: err, retryAfter: 30 },
    );
  }
  const network = await ensureNetwork(deps);
  const dnsServers = await hostNameservers();
  await ensureFirewall(deps, network.bridge, dnsServers, network.addresses);
  return network.gateway === undefined ? { dnsServers } : { gateway: network.gateway, dnsServers };
}

/** The sandbox network (created if missing, without inter-container traffic); its bridge. */
async function ensureNetwork({
  containers,
  config,
  logger,
}: HostSetupDeps): Promise<{ bridge: string; gateway?: string; addresses: string[] }> {
  const name = config.sandboxNetwork;
  const created = await containers.createNetwork({
    Name: name,
    Driver: 'bridge',
    CheckDuplicate: true,
    Labels: { [sandboxLabelKeys(config.labelPrefix).managed]: 'true' },
    // Sandboxes must not talk to each other.
    Options: { 'com.docker.network.bridge.enable_icc': 'false' },
  });
  if (created) logger.info({ network: name }, 'created sandbox network');
  const info = await containers.inspectNetwork(name);
  if (info.options['com.docker.network.bridge.enable_icc'] !== 'false') {
    throw new AppError(
      'service_unavailable',
      `Docker network ${name} lets containers talk to each other; remove it so the agent can recreate it`,
    );
  }
  const bridge = info.options['com.docker.network.bridge.name'] ?? `br-${info.id.slice(0, 12)}`;
  return {
    bridge,
    addresses: info.addresses ?? [],
    ...(info.gateway === undefined ? {} : { gateway: info.gateway }),
  };
}

/** Sandboxes reach the internet, never this host, private ranges or metadata services. */
async function ensureFirewall(
  { config, logger }: HostSetupDeps,
  bridge: string,
  dnsServers: string[],
  liveAddresses: string[],
): Promise<void> {
  if (!config.egressFirewall) {
    logger.warn('SANDBOX_EGRESS_FIREWALL=off: sandboxes can reach this host and private networks');
    return;
  }
  await applyEgressFirewall({
    bridge,
    dnsServers,
    allow: config.egressAllow,
    liveAddresses,
  });
  logger.info({ bridge }, 'sandbox egress firewall applied');
}
