import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { AppError } from '@sandbox/errors';

/**
 * Webhook URLs are the integrator's, but the gateway makes the request: without a guard they
 * would reach the control plane, the cloud metadata service or private networks (SSRF).
 */
const forbidden = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
  // Azure's WireServer (metadata and agent traffic).
  ['168.63.129.16', 32],
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // Unspecified, loopback and the IPv4-compatible and -translated forms.
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  // Teredo and 6to4 carry IPv4 addresses inside; documentation range.
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6');
}

export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return forbidden.check(mapped[1], 'ipv4');
  return forbidden.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const MAX_URL_LENGTH = 2048;

/** Validates a webhook URL as registered: http(s), no credentials, no private literal address. */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  const invalid = (message: string) =>
    new AppError('invalid_request', `url: ${message}`, { details: { field: 'url' } });
  if (raw.length > MAX_URL_LENGTH) throw invalid(`at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('must be http or https');
  if (url.username !== '' || url.password !== '') throw invalid('must not contain credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (isIP(host) !== 0 ? isForbiddenAddress(host) : isLocalName(host))) {
    throw invalid('must be a public address');
  }
  return url;
}

function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.internal');
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
        callback(
          Object.assign(new Error(`${hostname} resolves only to forbidden addresses`), {
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
