import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { iptablesRestore, type Restore } from '../iptables';

const exec = promisify(execFile);

/**
 * Addresses a sandbox must never reach: private, shared, link-local (cloud metadata),
 * loopback, multicast and reserved ranges. This host's own addresses are refused separately.
 */
export const BLOCKED_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '224.0.0.0/4',
  '240.0.0.0/4',
];

export const FORWARD_CHAIN = 'SANDBOX-EGRESS';
/**
 * The sessions' own policies (network/session-egress.ts), written by the agents as they
 * change: in the filter table from the forward chain, in the nat table (web traffic taken to
 * a node's egress proxy) from PREROUTING.
 */
export const SESSIONS_CHAIN = 'SANDBOX-SESSIONS';
/** Where the agents let sandboxes reach their egress proxies, on the host. */
export const PROXY_CHAIN = 'SANDBOX-PROXY';
export const INPUT_CHAIN = 'SANDBOX-HOST';

export interface EgressPolicy {
  /** The Linux bridge of the sandbox network. */
  bridge: string;
  /** DNS servers sandboxes may query (port 53), although they may be in a private range. */
  dnsServers: readonly string[];
  /** Ranges the operator allows although they are blocked by default. */
  allow: readonly string[];
  /** The addresses of the sandboxes on the network now (rules for others are stale). */
  liveAddresses?: readonly string[];
}

/**
 * iptables argument lists that, applied in order, enforce the policy:
 * - FORWARD (through DOCKER-USER): replies pass; DNS to the host's resolvers and the
 *   operator's allowed ranges pass; every blocked range is refused; the internet stays open.
 * - INPUT: nothing from a sandbox reaches this host's own services (gateway, agent, Postgres,
 *   Redis, the Docker API...), whatever address they listen on; replies to the host pass.
 */
export function firewallRules(policy: EgressPolicy): string[][] {
  const reject = ['-j', 'REJECT', '--reject-with', 'icmp-admin-prohibited'];
  const established = ['-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED'];
  const forward: string[][] = [
    // First, even before established connections: a policy tightened at run time cuts them.
    ['-A', FORWARD_CHAIN, '-j', SESSIONS_CHAIN],
    ['-A', FORWARD_CHAIN, ...established, '-j', 'RETURN'],
    ...policy.dnsServers.flatMap((server) =>
      ['udp', 'tcp'].map((proto) => [
        '-A',
        FORWARD_CHAIN,
        '-d',
        `${server}/32`,
        '-p',
        proto,
        '--dport',
        '53',
        '-j',
        'RETURN',
      ]),
    ),
    ...policy.allow.map((cidr) => ['-A', FORWARD_CHAIN, '-d', cidr, '-j', 'RETURN']),
    ...BLOCKED_RANGES.map((cidr) => ['-A', FORWARD_CHAIN, '-d', cidr, ...reject]),
    ['-A', FORWARD_CHAIN, '-j', 'RETURN'],
  ];
  const input: string[][] = [
    ['-A', INPUT_CHAIN, ...established, '-j', 'ACCEPT'],
    ['-A', INPUT_CHAIN, '-j', PROXY_CHAIN],
    ['-A', INPUT_CHAIN, ...reject],
  ];
  return [...forward, ...input];
}

/** The jumps into our chains, for the sandbox bridge only. */
export function jumpRules(bridge: string): string[][] {
  return [
    ['DOCKER-USER', '-i', bridge, '-j', FORWARD_CHAIN],
    ['INPUT', '-i', bridge, '-j', INPUT_CHAIN],
  ];
}

/** nameserver lines of a resolv.conf that are IPv4 addresses. */
export function parseNameservers(resolvConf: string): string[] {
  return resolvConf
    .split('\n')
    .map((line) => /^\s*nameserver\s+(\d{1,3}(?:\.\d{1,3}){3})\s*$/.exec(line)?.[1])
    .filter((server): server is string => server !== undefined);
}

export async function hostNameservers(path = '/etc/resolv.conf'): Promise<string[]> {
  return parseNameservers(await readFile(path, 'utf8').catch(() => ''));
}

/**
 * The rules of a listing of SESSIONS_CHAIN (`iptables -S`) that are not a node's jump to its
 * own chain (`SBXN-…`, network/session-egress.ts), as `-D` arguments: left by an older agent,
 * they would hold a sandbox that now has their address to another session's policy.
 */
export function strayRules(listing: string): string[][] {
  return listing
    .split('\n')
    .map((line) => line.trim())
    .filter(
      (line) =>
        line.startsWith(`-A ${SESSIONS_CHAIN} `) &&
        !new RegExp(`^-A ${SESSIONS_CHAIN} -j SBXN-[0-9a-f]{6}$`).test(line),
    )
    .map((line) => ['-D', ...line.split(/\s+/).slice(1)]);
}

/**
 * The jumps of any node's chain (`SBXN-…`, in a listing of `iptables -S`) for an address no
 * sandbox has now, as `-D` arguments: a node stopped with restricted sandboxes (a developer's
 * `./scripts/up`, a test) leaves them, and the next sandbox given that address would be held
 * to a policy that is not its own.
 */
export function staleJumps(listing: string, live: readonly string[]): string[][] {
  return listing
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(
      (words) =>
        words[0] === '-A' &&
        /^SBXN-[0-9a-f]{6}$/.test(words[1] ?? '') &&
        words[2] === '-s' &&
        !live.includes((words[3] ?? '').replace(/\/32$/, '')),
    )
    .map((words) => ['-D', ...words.slice(1)]);
}

/**
 * The `iptables-restore --noflush` input that replaces FORWARD_CHAIN's and INPUT_CHAIN's rules
 * with `rules` (firewallRules) in one transaction: a chain declared there is emptied and
 * refilled at once, never seen empty.
 */
export function restoreInput(rules: readonly string[][]): string {
  const lines = [
    '*filter',
    `:${FORWARD_CHAIN} - [0:0]`,
    `:${INPUT_CHAIN} - [0:0]`,
    ...rules.map((rule) => rule.join(' ')),
    'COMMIT',
    '',
  ];
  return lines.join('\n');
}

type Iptables = (args: string[]) => Promise<unknown>;

/** Deletes the sessions' chain's stray rules and, given the live addresses, stale jumps. */
async function pruneSessionRules(policy: EgressPolicy, run: Iptables): Promise<void> {
  for (const table of ['filter', 'nat']) {
    const listing = (await run(['-t', table, '-S', SESSIONS_CHAIN]).catch(() => undefined)) as
      { stdout?: string } | undefined;
    for (const rule of strayRules(listing?.stdout ?? '')) {
      await run(['-t', table, ...rule]).catch(() => undefined);
    }
    if (policy.liveAddresses !== undefined) {
      const all = (await run(['-t', table, '-S']).catch(() => undefined)) as
        { stdout?: string } | undefined;
      for (const rule of staleJumps(all?.stdout ?? '', policy.liveAddresses)) {
        await run(['-t', table, ...rule]).catch(() => undefined);
      }
    }
  }
}

/**
 * Installs the policy, idempotently. Our two chains are replaced in one transaction
 * (restoreInput): an agent that starts again, with sandboxes running, never leaves them a
 * moment without the policy.
 */
export async function applyEgressFirewall(
  policy: EgressPolicy,
  run: Iptables = (args) => exec('iptables', ['-w', ...args]),
  restore: Restore = iptablesRestore,
): Promise<void> {
  // Made if missing; the first two are refilled below, the others hold the sessions' policies.
  for (const chain of [FORWARD_CHAIN, INPUT_CHAIN, SESSIONS_CHAIN, PROXY_CHAIN]) {
    await run(['-N', chain]).catch(() => undefined); // exists already
  }
  await run(['-t', 'nat', '-N', SESSIONS_CHAIN]).catch(() => undefined);
  await pruneSessionRules(policy, run);
  const natJump = ['PREROUTING', '-i', policy.bridge, '-j', SESSIONS_CHAIN];
  const natPresent = await run(['-t', 'nat', '-C', ...natJump]).then(
    () => true,
    () => false,
  );
  if (!natPresent) {
    await run(['-t', 'nat', '-I', 'PREROUTING', '1', '-i', policy.bridge, '-j', SESSIONS_CHAIN]);
  }
  // Docker creates DOCKER-USER itself; make sure it exists even before Docker did.
  await run(['-N', 'DOCKER-USER']).catch(() => undefined);
  await restore(restoreInput(firewallRules(policy)));
  for (const [chain, ...rule] of jumpRules(policy.bridge)) {
    const present = await run(['-C', chain as string, ...rule]).then(
      () => true,
      () => false,
    );
    if (!present) await run(['-I', chain as string, '1', ...rule]);
  }
}
