import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
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

/** Is something listening on this TCP address and port (of this network namespace)? */
export type Listening = (address: string, port: number) => boolean;

/**
 * The proxy rules of `iptables -S chain` output to remove, as `-D` arguments: `nodeId`'s
 * earlier rule, and any node's rule whose port nothing listens on any more. An agent killed
 * outright never removes its rule; left, it would open that port of the host to installers
 * for whatever listens there next.
 */
export function staleRules(
  listing: string,
  chain: string,
  nodeId: string,
  listening: Listening = () => true,
): string[][] {
  return listing
    .split('\n')
    .map((line) => line.replace(/"/g, '').trim().split(/\s+/))
    .filter((words) => {
      if (words[0] !== '-A' || words[1] !== chain) return false;
      const comment = words[words.indexOf('--comment') + 1] ?? '';
      if (!comment.startsWith(commentOf(''))) return false;
      if (comment === commentOf(nodeId)) return true;
      const address = (words[words.indexOf('-d') + 1] ?? '').replace(/\/32$/, '');
      const port = Number(words[words.indexOf('--dport') + 1]);
      return !listening(address, port);
    })
    .map((words) => ['-D', ...words.slice(1)]);
}

/** The `address:port` of every listening TCP socket in /proc/net/tcp and tcp6 text. */
export function listeningSockets(tables: readonly string[]): Set<string> {
  const found = new Set<string>();
  for (const table of tables) {
    for (const line of table.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || local === undefined) continue; // 0A: LISTEN
      const [hex, portHex] = local.split(':');
      if (hex === undefined || portHex === undefined) continue;
      found.add(`${addressOf(hex)}:${parseInt(portHex, 16)}`);
    }
  }
  return found;
}

/** /proc/net's hex address: IPv4 as one little-endian word; IPv6 only when it is `::` or v4-mapped. */
function addressOf(hex: string): string {
  if (hex.length === 8) {
    const bytes = [6, 4, 2, 0].map((i) => parseInt(hex.slice(i, i + 2), 16));
    return bytes.join('.');
  }
  if (/^0+$/.test(hex)) return '::';
  if (hex.startsWith('0000000000000000FFFF0000')) return addressOf(hex.slice(24));
  return hex;
}

/** Whether `address:port` is listened on, directly or through a wildcard socket. */
export function listensOn(sockets: ReadonlySet<string>): Listening {
  return (address, port) =>
    [address, '0.0.0.0', '::'].some((candidate) => sockets.has(`${candidate}:${port}`));
}

async function hostListening(): Promise<Listening> {
  const tables = await Promise.all(
    ['/proc/net/tcp', '/proc/net/tcp6'].map((path) => readFile(path, 'utf8').catch(() => '')),
  );
  return listensOn(listeningSockets(tables));
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
  listening?: Listening,
): Promise<void> {
  await run(['-N', INSTALLER_CHAIN]).catch(() => undefined); // exists already
  await removeInstallerRule(rule.nodeId, run, listening ?? (await hostListening()));
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

/**
 * Removes `nodeId`'s proxy rule (its agent stops, or starts again with another port) and,
 * given `listening`, the rules of proxies gone (staleRules).
 */
export async function removeInstallerRule(
  nodeId: string,
  run: Iptables = iptables,
  listening?: Listening,
): Promise<void> {
  const listing = await run(['-S', INSTALLER_CHAIN]).catch(() => undefined);
  const text = listing?.stdout ?? '';
  for (const rule of staleRules(text, INSTALLER_CHAIN, nodeId, listening)) {
    await run(rule).catch(() => undefined);
  }
}
