import { createHash } from 'node:crypto';
import { formatCidr, isAllowAll, rulesOf, type EgressPolicy } from '@sandbox/contract';
import type { DnsFilterPorts } from './dns-filter';
import type { ProxyPorts } from './egress-proxy';

/*
 * The sessions' egress policies as iptables text, made without running anything: SessionEgress
 * (session-egress.ts) writes it.
 */

const REJECT = '-j REJECT --reject-with icmp-admin-prohibited';

const hash = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

/**
 * The chains of one node (one agent): each node writes only its own, so that agents sharing a
 * host (tests; a node restarting next to its successor) never undo each other's rules. The
 * node's chain holds its sandboxes' jumps, each session's chain its rules; names within
 * iptables' 28 characters.
 */
export function nodeChains(nodeId: string): {
  node: string;
  session: (sessionId: string) => string;
  prefix: string;
  /** The filter chain that lets the node's sandboxes reach its egress proxy. */
  proxy: string;
} {
  const tag = hash(nodeId, 6);
  return {
    node: `SBXN-${tag}`,
    session: (sessionId) => `SBX${tag}-${hash(sessionId, 16)}`,
    prefix: `SBX${tag}-`,
    proxy: `SBXP-${tag}`,
  };
}

/** Where the node's egress proxy and DNS filter listen: the sandbox network's gateway. */
export interface ProxyTarget {
  gateway: string;
  ports: ProxyPorts;
  /** The DNS filter's ports (network/dns-filter.ts). */
  dns: DnsFilterPorts;
}

/**
 * Whether a policy's web traffic goes through the egress proxy: when its domain rules decide
 * something (a denied domain, or an allowed one under a default of deny).
 */
export function needsProxy(policy: EgressPolicy): boolean {
  return (
    rulesOf(policy.deny).domains.length > 0 ||
    (policy.default === 'deny' && rulesOf(policy.allow).domains.length > 0)
  );
}

/**
 * The nat lines of a proxied session's chain: its DNS, to any address on port 53 over UDP or
 * TCP, goes to the node's DNS filter (which answers only the names its policy allows: no data
 * out by DNS, issue 40), before anything else, an allowed CIDR included; destinations its CIDR
 * rules name keep their way (the forward chain decides them); the rest of its web traffic goes
 * to the proxy.
 */
export function natRules(chain: string, policy: EgressPolicy, proxy: ProxyTarget): string[] {
  const named = [...rulesOf(policy.allow).cidrs, ...rulesOf(policy.deny).cidrs];
  return [
    `-A ${chain} -p udp --dport 53 -j DNAT --to-destination ${proxy.gateway}:${proxy.dns.udp}`,
    `-A ${chain} -p tcp --dport 53 -j DNAT --to-destination ${proxy.gateway}:${proxy.dns.tcp}`,
    ...named.map((c) => `-A ${chain} -d ${formatCidr(c)} -j RETURN`),
    `-A ${chain} -p tcp --dport 80 -j DNAT --to-destination ${proxy.gateway}:${proxy.ports.http}`,
    `-A ${chain} -p tcp --dport 443 -j DNAT --to-destination ${proxy.gateway}:${proxy.ports.tls}`,
  ];
}

/**
 * The lines of a session's chain: its denied CIDRs refused, its allowed ones let on (to the
 * node's rules), then its default. Domain rules are not here: a policy with domains has its
 * web traffic and its DNS taken to the node's egress proxy and DNS filter before it gets here.
 */
export function sessionRules(chain: string, policy: EgressPolicy): string[] {
  const deny = rulesOf(policy.deny).cidrs.map((c) => `-A ${chain} -d ${formatCidr(c)} ${REJECT}`);
  const allow = rulesOf(policy.allow).cidrs.map((c) => `-A ${chain} -d ${formatCidr(c)} -j RETURN`);
  const last = policy.default === 'allow' ? `-A ${chain} -j RETURN` : `-A ${chain} ${REJECT}`;
  return [...deny, ...allow, last];
}

/** Whether a sandbox under `policy` may use Docker's DNS: when it may reach some name at all. */
export function allowsDns(policy: EgressPolicy): boolean {
  return policy.default === 'allow' || rulesOf(policy.allow).domains.length > 0;
}

/**
 * The `iptables-restore --noflush` input that makes a node's chains hold these sessions: the
 * filter table's (every restricted session), and with a proxy, the nat table's (the sessions
 * whose web traffic it takes) and the rule that lets sandboxes reach it.
 */
export function restoreInput(
  nodeId: string,
  sessions: ReadonlyMap<string, Held>,
  proxy?: ProxyTarget,
): string {
  const chains = nodeChains(nodeId);
  const filter = ['*filter', `:${chains.node} - [0:0]`];
  const filterRules: string[] = [];
  const nat = ['*nat', `:${chains.node} - [0:0]`];
  const natLines: string[] = [];
  for (const [sessionId, { ip, policy }] of sessions) {
    if (isAllowAll(policy)) continue;
    const chain = chains.session(sessionId);
    filter.push(`:${chain} - [0:0]`);
    filterRules.push(...sessionRules(chain, policy));
    filterRules.push(`-A ${chains.node} -s ${ip}/32 -j ${chain}`);
    if (proxy !== undefined && needsProxy(policy)) {
      nat.push(`:${chain} - [0:0]`);
      natLines.push(...natRules(chain, policy, proxy));
      natLines.push(`-A ${chains.node} -s ${ip}/32 -j ${chain}`);
    }
  }
  if (proxy === undefined) return [...filter, ...filterRules, 'COMMIT', ''].join('\n');
  filter.push(`:${chains.proxy} - [0:0]`);
  filterRules.push(
    `-A ${chains.proxy} -d ${proxy.gateway}/32 -p tcp -m multiport --dports ${proxy.ports.http},${proxy.ports.tls},${proxy.dns.tcp} -j ACCEPT`,
    `-A ${chains.proxy} -d ${proxy.gateway}/32 -p udp --dport ${proxy.dns.udp} -j ACCEPT`,
  );
  return [...filter, ...filterRules, 'COMMIT', ...nat, ...natLines, 'COMMIT', ''].join('\n');
}

/** What the node holds for a session: its sandbox's address, its policy, where DNS is closed. */
export interface Held {
  ip: string;
  policy: EgressPolicy;
  /** The pid whose network namespace has Docker's DNS refused (the sandbox's, then). */
  dnsClosedIn?: number;
}
