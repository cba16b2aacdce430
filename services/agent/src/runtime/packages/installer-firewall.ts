import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * The installer network is internal (Docker gives it no route out), but its gateway is this
 * host: without more, an installer could reach every service of the host that listens on all
 * addresses. This chain lets it reach the registry proxies of the host's agents only.
 */
export const INSTALLER_CHAIN = 'SANDBOX-INSTALLER';

export interface InstallerFirewall {
  /** The Linux bridge of the installer network. */
  bridge: string;
  /** The proxy of this agent: the gateway address and port it listens on. */
  gateway: string;
  port: number;
  /** Whose proxy it is (one rule per node; a node's earlier rule is replaced). */
  nodeId: string;
}

type Iptables = (args: string[]) => Promise<{ stdout?: string } | undefined>;

const iptables: Iptables = (args) => exec('iptables', ['-w', ...args]);

const commentOf = (nodeId: string) => `installer-proxy:${nodeId}`;

/** The rule that lets installers reach this node's proxy. */
export function proxyRule(rule: InstallerFirewall): string[] {
  return [
    '-p',
    'tcp',
    '-d',
    `${rule.gateway}/32`,
    '--dport',
    String(rule.port),
    '-m',
    'comment',
    '--comment',
    commentOf(rule.nodeId),
    '-j',
    'ACCEPT',
  ];
}

/** The rules of `iptables -S chain` output that carry `nodeId`'s comment, as `-D` arguments. */
export function staleRules(listing: string, chain: string, nodeId: string): string[][] {
  return listing
    .split('\n')
    .map((line) => line.replace(/"/g, '').trim().split(/\s+/))
    .filter(
      (words) =>
        words[0] === '-A' &&
        words[1] === chain &&
        words[words.indexOf('--comment') + 1] === commentOf(nodeId),
    )
    .map((words) => ['-D', ...words.slice(1)]);
}

async function ensure(run: Iptables, check: string[], add: string[]): Promise<void> {
  const present = await run(['-C', ...check]).then(
    () => true,
    () => false,
  );
  if (!present) await run(add);
}

/**
 * Installers reach this node's proxy and nothing else of the host: replies pass, each agent's
 * proxy rule comes first, everything else from the installer bridge is refused.
 */
export async function applyInstallerFirewall(
  rule: InstallerFirewall,
  run: Iptables = iptables,
): Promise<void> {
  await run(['-N', INSTALLER_CHAIN]).catch(() => undefined); // exists already
  await removeInstallerRule(rule.nodeId, run);
  const reject = ['-j', 'REJECT', '--reject-with', 'icmp-admin-prohibited'];
  const established = ['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT'];
  await ensure(
    run,
    [INSTALLER_CHAIN, ...established],
    ['-I', INSTALLER_CHAIN, '1', ...established],
  );
  await run(['-I', INSTALLER_CHAIN, '2', ...proxyRule(rule)]);
  await ensure(run, [INSTALLER_CHAIN, ...reject], ['-A', INSTALLER_CHAIN, ...reject]);
  const jump = ['-i', rule.bridge, '-j', INSTALLER_CHAIN];
  await ensure(run, ['INPUT', ...jump], ['-I', 'INPUT', '1', ...jump]);
}

/** Removes `nodeId`'s proxy rule (its agent stops, or starts again with another port). */
export async function removeInstallerRule(nodeId: string, run: Iptables = iptables): Promise<void> {
  const listing = await run(['-S', INSTALLER_CHAIN]).catch(() => undefined);
  const text = listing?.stdout ?? '';
  for (const rule of staleRules(text, INSTALLER_CHAIN, nodeId)) {
    await run(rule).catch(() => undefined);
  }
}
