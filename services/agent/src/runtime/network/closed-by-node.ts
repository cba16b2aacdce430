import { networkInterfaces } from 'node:os';
import { cidrContains, ipv4, parseCidr, type Cidr } from '@sandbox/contract';
import { BLOCKED_RANGES } from '../docker/egress-firewall';

const cidrs = (list: readonly string[]): Cidr[] =>
  list.map((text) => parseCidr(text)).filter((cidr): cidr is Cidr => cidr !== undefined);

/**
 * What the node's own firewall (ADR 9) keeps every sandbox from: this host's addresses, and
 * private, link-local, reserved ranges unless the operator allows them (SANDBOX_EGRESS_ALLOW).
 * The egress proxy, which connects from the host, holds its connections to the same.
 */
export function closedByNode(
  allowed: readonly string[],
  hostAddresses: () => string[] = ownAddresses,
): (ip: string) => boolean {
  const blocked = cidrs(BLOCKED_RANGES);
  const open = cidrs(allowed);
  return (ip) => {
    const address = ipv4(ip);
    if (address === undefined) return true;
    if (hostAddresses().includes(ip)) return true;
    if (open.some((cidr) => cidrContains(cidr, address))) return false;
    return blocked.some((cidr) => cidrContains(cidr, address));
  };
}

function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((entry) => entry?.family === 'IPv4')
    .map((entry) => entry?.address ?? '');
}
