import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import { AppError } from '@sandbox/errors';

/**
 * Webhook URLs are the integrator's, but the gateway makes the request: without a guard they
 * would reach the gateway's own host, the control plane, the cloud metadata service or private
 * networks (SSRF). Refused: every range of the IANA IPv4 and IPv6 Special-Purpose Address
 * Registries, Azure's WireServer, and every address of this host's interfaces. Each range says
 * why, so that a refusal can tell the integrator (and an operator reading a disabled endpoint).
 */
const SPECIAL_RANGES: ReadonlyArray<readonly [network: string, prefix: number, reason: string]> = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (metadata)'],
  ['172.16.0.0', 12, 'private'],
  // IETF protocol assignments, AS112, AMT, the deprecated 6to4 relay anycast.
  ['192.0.0.0', 24, 'reserved'],
  ['192.31.196.0', 24, 'reserved'],
  ['192.52.193.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.175.48.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
  ['240.0.0.0', 4, 'reserved'],
  ['168.63.129.16', 32, 'metadata (Azure WireServer)'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  // IPv4-compatible (deprecated) and IPv4-translated: they carry an IPv4 address inside.
  ['::', 96, 'reserved'],
  ['::ffff:0:0:0', 96, 'reserved'],
  ['64:ff9b::', 96, 'IPv4 translation (NAT64)'],
  ['64:ff9b:1::', 48, 'IPv4 translation (NAT64)'],
  ['100::', 64, 'discard-only'],
  // IETF protocol assignments, Teredo (an IPv4 address inside) among them.
  ['2001::', 23, 'reserved'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, 'IPv4 translation (6to4)'],
  ['2620:4f:8000::', 48, 'reserved'],
  ['3fff::', 20, 'documentation'],
  ['5f00::', 16, 'reserved'],
  // Unique local (AWS's metadata service, fd00:ec2::254, among them).
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'reserved'],
  ['ff00::', 8, 'multicast'],
];

/**
 * One list per range, checked in order. The IPv4-mapped range (::ffff:0:0/96) is not among
 * them: a BlockList matches every IPv4 address against it. Mapped addresses are unmapped first.
 */
const specialRanges = SPECIAL_RANGES.map(([network, prefix, reason]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, isIP(network) === 4 ? 'ipv4' : 'ipv6');
  return { list, reason };
});

export const OWN_ADDRESS = "this host's own address";

/** What `os.networkInterfaces()` answers, as far as is read here. */
type ReadInterfaces = () => NodeJS.Dict<ReadonlyArray<{ address: string }>>;

/**
 * This host's own addresses, read again once `ttlMs` old: interfaces come and go (a container
 * network, a VPN), and a public address on an interface is this host all the same.
 */
export class HostAddresses {
  private list = new BlockList();
  private readAt = -Infinity;

  constructor(
    private readonly read: ReadInterfaces = networkInterfaces,
    private readonly ttlMs = 5000,
    private readonly now: () => number = Date.now,
  ) {}

  has(address: string): boolean {
    if (this.now() - this.readAt >= this.ttlMs) {
      const list = new BlockList();
      for (const entries of Object.values(this.read())) {
        for (const { address: own } of entries ?? []) {
          const family = isIP(own);
          if (family !== 0) list.addAddress(own, family === 4 ? 'ipv4' : 'ipv6');
        }
      }
      this.list = list;
      this.readAt = this.now();
    }
    const family = isIP(address);
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

const hostAddresses = new HostAddresses();

/**
 * Why the gateway must not connect to `address`, or undefined when it may. Loopback says so
 * first; then this host's own addresses (a public one included), then the special ranges.
 * An IPv4-mapped address (::ffff:a.b.c.d) answers for its IPv4 address, and is refused anyway.
 */
export function addressRefusal(
  address: string,
  own: Pick<HostAddresses, 'has'> = hostAddresses,
): string | undefined {
  const bare = address.replace(/%.*$/, '');
  if (isIP(bare) === 0) return 'not an IP address';
  const ipv4 = isIP(bare) === 4 ? bare : unmappedIPv4(bare);
  const checked = ipv4 ?? bare;
  const range = specialRanges.find(({ list }) =>
    list.check(checked, ipv4 === undefined ? 'ipv6' : 'ipv4'),
  )?.reason;
  if (range === 'loopback') return range;
  if (own.has(checked)) return OWN_ADDRESS;
  if (range !== undefined) return range;
  return ipv4 !== undefined && ipv4 !== bare ? 'IPv4-mapped' : undefined;
}

/** Whether `address` is refused (`addressRefusal` says why). */
export function isForbiddenAddress(address: string): boolean {
  return addressRefusal(address) !== undefined;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d in any spelling). */
function unmappedIPv4(ipv6: string): string | undefined {
  // The URL parser writes every IPv6 address one way: lowercase, zeros compressed, hex words.
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(
    new URL(`http://[${ipv6}]/`).hostname,
  );
  if (mapped === null) return undefined;
  const [high = 0, low = 0] = mapped.slice(1).map((word) => parseInt(word, 16));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

const MAX_URL_LENGTH = 2048;

const invalidUrl = (message: string) =>
  new AppError('invalid_request', `url: ${message}`, { details: { field: 'url' } });

const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, '');

/** Why a URL's host is refused as written (a literal address, a local name), or undefined. */
function literalRefusal(host: string): string | undefined {
  const reason =
    isIP(host) !== 0 ? addressRefusal(host) : isLocalName(host) ? 'local name' : undefined;
  return reason === undefined ? undefined : `${host} is not a public address (${reason})`;
}

/** Validates a webhook URL as registered: http(s), no credentials, no refused literal address. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  if (raw.length > MAX_URL_LENGTH) throw invalidUrl(`at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidUrl('not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalidUrl('must be http or https');
  }
  if (url.username !== '' || url.password !== '') throw invalidUrl('must not contain credentials');
  const refusal = allowPrivate ? undefined : literalRefusal(hostOf(url));
  if (refusal !== undefined) throw invalidUrl(refusal);
  return url;
}

function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.internal');
}

/** The addresses a name resolves to; none when it does not resolve (in time). */
export type ResolveName = (name: string) => Promise<string[]>;

/** How long a registration waits for its name to resolve. */
const RESOLVE_TIMEOUT_MS = 2000;

/** Resolves as delivery does (getaddrinfo: /etc/hosts, then DNS), for `timeoutMs` at most. */
export async function resolveName(name: string, timeoutMs = RESOLVE_TIMEOUT_MS): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<LookupAddress[]>((resolve) => {
    timer = setTimeout(() => resolve([]), timeoutMs);
  });
  try {
    const found = await Promise.race([dnsLookupAll(name, { all: true }), late]);
    return found.map((entry) => entry.address);
  } catch {
    return [];
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why the gateway refuses to send to `url`, or undefined: its literal address, or any address
 * its name resolves to now, is refused. A name that does not resolve (or not within the
 * timeout) is accepted: delivery checks every address it connects to (`guardedLookup`),
 * whatever the name resolves to then.
 */
export async function destinationRefusal(
  url: URL,
  resolve: ResolveName = resolveName,
): Promise<string | undefined> {
  const host = hostOf(url);
  const literal = literalRefusal(host);
  if (literal !== undefined || isIP(host) !== 0) return literal;
  for (const address of await resolve(host)) {
    const reason = addressRefusal(address);
    if (reason !== undefined) {
      return `${host} resolves to ${address}, which is not a public address (${reason})`;
    }
  }
  return undefined;
}

/** `parseWebhookUrl`, then its name resolved: registration refuses what delivery would. */
export async function checkWebhookUrl(
  raw: string,
  allowPrivate: boolean,
  resolve: ResolveName = resolveName,
): Promise<URL> {
  const url = parseWebhookUrl(raw, allowPrivate);
  const refusal = allowPrivate ? undefined : await destinationRefusal(url, resolve);
  if (refusal !== undefined) throw invalidUrl(refusal);
  return url;
}

/**
 * A DNS lookup for outgoing webhook requests that refuses forbidden addresses, checked on the
 * address actually connected to (a name that resolves differently later cannot slip through).
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const allowed = addresses.filter(
        (entry) => allowPrivate || !isForbiddenAddress(entry.address),
      );
      const first = allowed[0];
      if (first === undefined) {
        const refused = addresses
          .map((entry) => `${entry.address} (${addressRefusal(entry.address) ?? 'refused'})`)
          .join(', ');
        callback(
          Object.assign(new Error(`${hostname} resolves only to refused addresses: ${refused}`), {
            code: 'EFORBIDDEN',
          }),
          '',
          0,
        );
      } else if (options.all) {
        callback(null, allowed);
      } else {
        callback(null, first.address, first.family);
      }
    });
  };
}
