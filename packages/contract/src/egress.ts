/*
 * A session's egress policy: where its sandbox may open connections to, beyond what is never
 * reachable (this host, private ranges, metadata: the node's firewall, ADR 9). Set at create,
 * replaced at any time (PUT /v1/sessions/{id}/egress); enforced by the node (ADR 30).
 */

export type EgressDefault = 'allow' | 'deny';

export interface EgressPolicy {
  /** What a destination that no rule names gets. */
  default: EgressDefault;
  /** IPv4 CIDRs (`203.0.113.0/24`, or one address) and domain names (`example.com`, `*.example.com`). */
  allow: string[];
  /** The same; a destination both lists name is refused. */
  deny: string[];
}

/** Whether a policy is allow-all (the node's own rules alone). */
export function isAllowAll(policy: EgressPolicy): boolean {
  return policy.default === 'allow' && policy.allow.length === 0 && policy.deny.length === 0;
}

/** Whether two policies say the same. */
export function samePolicy(a: EgressPolicy, b: EgressPolicy): boolean {
  return (
    a.default === b.default &&
    a.allow.join('\n') === b.allow.join('\n') &&
    a.deny.join('\n') === b.deny.join('\n')
  );
}

/** Rules per list at the most. */
export const MAX_EGRESS_RULES = 64;

/** Internet open, as before policies: the default of every plan unless the operator says otherwise. */
export const ALLOW_ALL: EgressPolicy = { default: 'allow', allow: [], deny: [] };

export interface Cidr {
  /** The network address as a 32-bit number. */
  network: number;
  prefix: number;
}

/** `a.b.c.d` as a 32-bit number, or undefined. */
export function ipv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

/** An IPv4 CIDR (or a single address, /32), normalised to its network; undefined if not one. */
export function parseCidr(text: string): Cidr | undefined {
  const [address = '', prefixText, ...rest] = text.split('/');
  if (rest.length > 0) return undefined;
  const ip = ipv4(address);
  if (ip === undefined) return undefined;
  if (prefixText !== undefined && !/^(0|[1-9]\d?)$/.test(prefixText)) return undefined;
  const prefix = prefixText === undefined ? 32 : Number(prefixText);
  if (prefix > 32) return undefined;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return { network: (ip & mask) >>> 0, prefix };
}

export function formatCidr({ network, prefix }: Cidr): string {
  const bytes = [24, 16, 8, 0].map((shift) => (network >>> shift) & 255);
  return `${bytes.join('.')}/${prefix}`;
}

export function cidrContains({ network, prefix }: Cidr, ip: number): boolean {
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return (ip & mask) >>> 0 === network;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A domain rule, lower-cased: a host name of two labels or more, optionally `*.` in front
 * (its subdomains, not itself); undefined if not one. A name that is all digits and dots is
 * an address, not a domain.
 */
export function parseDomain(text: string): string | undefined {
  const lower = text.trim().toLowerCase().replace(/\.$/, '');
  const wildcard = lower.startsWith('*.');
  const name = wildcard ? lower.slice(2) : lower;
  if (name.length === 0 || name.length > 253) return undefined;
  const labels = name.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  if (/^[\d.]+$/.test(name)) return undefined;
  return wildcard ? `*.${name}` : name;
}

/** Whether `name` is matched by a domain rule (`*.x` matches x's subdomains only). */
export function domainMatches(rule: string, name: string): boolean {
  const host = name.toLowerCase().replace(/\.$/, '');
  if (rule.startsWith('*.')) return host.endsWith(rule.slice(1));
  return host === rule;
}

/** A rule as written: a CIDR, or a domain. */
export type EgressRule = { cidr: Cidr; text: string } | { domain: string; text: string };

/** One rule, normalised; undefined if it is neither a CIDR nor a domain. */
export function parseRule(text: string): EgressRule | undefined {
  if (typeof text !== 'string' || text.length > 260) return undefined;
  const cidr = parseCidr(text.trim());
  if (cidr !== undefined) return { cidr, text: formatCidr(cidr) };
  const domain = parseDomain(text);
  return domain === undefined ? undefined : { domain, text: domain };
}

/** What is wrong with a policy's input, field by field. */
export interface EgressProblem {
  field: string;
  message: string;
  value?: unknown;
}

/**
 * A policy from the API's input (`default`, `allow`, `deny`, each optional: a missing default
 * is `fallback`), normalised (rules de-duplicated, CIDRs to their network); or the first
 * problem with it.
 */
export function parseEgressPolicy(
  input: {
    default?: EgressDefault | undefined;
    allow?: string[] | undefined;
    deny?: string[] | undefined;
  },
  fallback: EgressDefault,
): EgressPolicy | EgressProblem {
  const lists: Record<'allow' | 'deny', string[]> = { allow: [], deny: [] };
  for (const key of ['allow', 'deny'] as const) {
    const rules = input[key] ?? [];
    if (rules.length > MAX_EGRESS_RULES) {
      return { field: `egress.${key}`, message: `at most ${MAX_EGRESS_RULES} rules` };
    }
    for (const [i, text] of rules.entries()) {
      const rule = parseRule(text);
      if (rule === undefined) {
        return {
          field: `egress.${key}[${i}]`,
          message:
            'must be an IPv4 address or CIDR (203.0.113.0/24) or a domain (example.com, *.example.com)',
          value: text,
        };
      }
      if (!lists[key].includes(rule.text)) lists[key].push(rule.text);
    }
  }
  return { default: input.default ?? fallback, allow: lists.allow, deny: lists.deny };
}

export function isEgressProblem(value: EgressPolicy | EgressProblem): value is EgressProblem {
  return 'field' in value;
}

/** The rules of a list, split by kind. */
export function rulesOf(list: readonly string[]): { cidrs: Cidr[]; domains: string[] } {
  const cidrs: Cidr[] = [];
  const domains: string[] = [];
  for (const text of list) {
    const rule = parseRule(text);
    if (rule === undefined) continue;
    if ('cidr' in rule) cidrs.push(rule.cidr);
    else domains.push(rule.domain);
  }
  return { cidrs, domains };
}

/**
 * The decision for a connection to `ip`, named `name` (its TLS SNI or HTTP Host) if known: a
 * deny rule wins over an allow rule, which wins over the default. A connection without a name
 * gets the CIDR rules and the default, except in a policy that denies domains, which refuses
 * it: its address could be a denied domain's.
 */
export function egressDecision(
  policy: EgressPolicy,
  ip: number,
  name: string | undefined,
): boolean {
  const deny = rulesOf(policy.deny);
  const allow = rulesOf(policy.allow);
  if (deny.cidrs.some((c) => cidrContains(c, ip))) return false;
  if (name !== undefined && deny.domains.some((d) => domainMatches(d, name))) return false;
  if (name === undefined && deny.domains.length > 0) return false;
  if (allow.cidrs.some((c) => cidrContains(c, ip))) return true;
  if (name !== undefined && allow.domains.some((d) => domainMatches(d, name))) return true;
  return policy.default === 'allow';
}

/**
 * Whether a session under `policy` may resolve `name` (its DNS goes through the node's filter
 * when its policy has domain rules): a denied domain never, an allowed one always, any other
 * as the default says. Address rules do not decide names.
 */
export function nameDecision(policy: EgressPolicy, name: string): boolean {
  if (rulesOf(policy.deny).domains.some((d) => domainMatches(d, name))) return false;
  if (rulesOf(policy.allow).domains.some((d) => domainMatches(d, name))) return true;
  return policy.default === 'allow';
}
