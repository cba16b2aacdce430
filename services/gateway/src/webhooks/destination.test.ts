import { networkInterfaces } from 'node:os';
import { AppError } from '@sandbox/errors';
import {
  addressRefusal,
  checkWebhookUrl,
  destinationRefusal,
  guardedLookup,
  HostAddresses,
  isForbiddenAddress,
  OWN_ADDRESS,
  parseWebhookUrl,
  resolveName,
} from './destination';

/** A host with no address of its own: the reasons of the ranges alone. */
const noOwnAddress = { has: () => false };

/** `address` is refused for `reason` by the ranges alone, and so forbidden. */
function expectRefused(address: string, reason: string): void {
  expect(addressRefusal(address, noOwnAddress)).toBe(reason);
  expect(isForbiddenAddress(address)).toBe(true);
}

describe('webhook destinations: allowed addresses', () => {
  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700::1111',
    // Just outside 192.0.2.0/24, 198.51.100.0/24 and 2001::/23.
    '192.0.3.1',
    '198.51.101.1',
    '2001:200::1',
  ])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('webhook destinations: the reason an address is refused', () => {
  it.each([
    ['0.1.2.3', 'unspecified'],
    ['0.0.0.0', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.1.2.3', 'private'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['100.127.255.254', 'shared (carrier-grade NAT)'],
    ['127.0.0.53', 'loopback'],
    ['127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local (metadata)'],
    ['172.31.255.255', 'private'],
    ['172.20.0.1', 'private'],
    ['192.0.0.170', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['192.31.196.1', 'reserved'],
    ['192.52.193.1', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.168.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['192.175.48.1', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.1', 'documentation'],
    ['203.0.113.1', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['168.63.129.16', 'metadata (Azure WireServer)'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::a9fe:a9fe', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['::ffff:0:a9fe:a9fe', 'reserved'],
    ['::ffff:0:7f00:1', 'reserved'],
    ['64:ff9b::a9fe:a9fe', 'IPv4 translation (NAT64)'],
    ['64:ff9b:1::1', 'IPv4 translation (NAT64)'],
    ['64:ff9b:1::a9fe:a9fe', 'IPv4 translation (NAT64)'],
    ['100::1', 'discard-only'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001:1ff::1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['2002:c000:201::', 'IPv4 translation (6to4)'],
    ['2002:a9fe:a9fe::', 'IPv4 translation (6to4)'],
    ['2620:4f:8000::1', 'reserved'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'reserved'],
    ['fd00:ec2::254', 'private'],
    ['fd00::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'reserved'],
    ['ff02::1', 'multicast'],
    ['not-an-ip', 'not an IP address'],
  ])('refuses %s as %s', expectRefused);

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:7F00:0001', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local (metadata)'],
    ['::ffff:169.254.169.254', 'link-local (metadata)'],
    ['::ffff:192.0.2.1', 'documentation'],
    ['::ffff:c633:6401', 'documentation'],
    ['::ffff:c000:201', 'documentation'],
    ['::ffff:10.0.0.1', 'private'],
    // Public, but IPv4-mapped: the registry reserves the whole range.
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
  ])('answers the IPv4-mapped %s for its IPv4 address: %s', expectRefused);
});

describe("webhook destinations: the host's own addresses", () => {
  it("refuses this host's own addresses, public ones too, in any spelling", () => {
    const own = new HostAddresses(() => ({
      lo: [{ address: '127.0.0.1' }, { address: '::1' }],
      eth0: [{ address: '93.184.216.34' }, { address: '2606:4700::1111' }],
    }));
    expect(addressRefusal('93.184.216.34', own)).toBe(OWN_ADDRESS);
    expect(addressRefusal('::ffff:93.184.216.34', own)).toBe(OWN_ADDRESS);
    expect(addressRefusal('::ffff:5db8:d822', own)).toBe(OWN_ADDRESS);
    expect(addressRefusal('2606:4700:0:0:0:0:0:1111', own)).toBe(OWN_ADDRESS);
    // Loopback is the more telling reason.
    expect(addressRefusal('127.0.0.1', own)).toBe('loopback');
    expect(addressRefusal('93.184.216.35', own)).toBeUndefined();
  });

  it('refuses every address of os.networkInterfaces(): loopback, or as its own', () => {
    // One reading of the interfaces for both sides: other tests on this machine add and remove
    // interfaces meanwhile, and the default list is read again only every few seconds.
    const interfaces = networkInterfaces();
    const own = new HostAddresses(() => interfaces);
    const addresses = Object.values(interfaces).flatMap((entries) =>
      (entries ?? []).map((entry) => entry.address),
    );
    expect(addresses.length).toBeGreaterThan(0);
    for (const address of addresses) {
      const loopback = addressRefusal(address, noOwnAddress) === 'loopback';
      expect([address, addressRefusal(address, own)]).toEqual([
        address,
        loopback ? 'loopback' : OWN_ADDRESS,
      ]);
      expect(isForbiddenAddress(address)).toBe(true);
    }
  });

  it("reads the host's interfaces again once they are a few seconds old", () => {
    let now = 0;
    const interfaces: Record<string, { address: string }[]> = { eth0: [] };
    const read = jest.fn(() => interfaces);
    const own = new HostAddresses(read, 5000, () => now);
    expect(own.has('93.184.216.34')).toBe(false);
    interfaces.eth0 = [{ address: '93.184.216.34' }];
    now = 4999;
    expect(own.has('93.184.216.34')).toBe(false);
    now = 5000;
    expect(own.has('93.184.216.34')).toBe(true);
    expect(read).toHaveBeenCalledTimes(2);
  });
});

describe('webhook destinations: URLs and names', () => {
  it.each([
    ['ftp://example.com/hook', /http or https/],
    ['https://user:pass@example.com/hook', /credentials/],
    ['http://169.254.169.254/latest', /169\.254\.169\.254 is not a public address \(link-local/],
    ['http://[::1]:8080/', /::1 is not a public address \(loopback\)/],
    ['http://[::ffff:127.0.0.1]:8080/', /::ffff:7f00:1 is not a public address \(loopback\)/],
    ['http://192.0.2.1/', /192\.0\.2\.1 is not a public address \(documentation\)/],
    ['http://198.51.100.1/', /\(documentation\)/],
    ['http://203.0.113.1/', /\(documentation\)/],
    ['http://localhost:8080/', /localhost is not a public address \(local name\)/],
    ['http://metadata.google.internal/', /public address/],
    ['not a url', /valid URL/],
  ])('refuses %s', (url, message) => {
    expect(() => parseWebhookUrl(url, false)).toThrow(message);
  });

  it('accepts public URLs, and private ones only when allowed', () => {
    expect(parseWebhookUrl('https://hooks.example.com/x', false).hostname).toBe(
      'hooks.example.com',
    );
    expect(parseWebhookUrl('http://127.0.0.1:9000/hook', true).port).toBe('9000');
  });

  it('refuses names that resolve to forbidden addresses at connection time', async () => {
    const lookup = guardedLookup(false);
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      lookup('localhost', { family: 0 }, (err) => resolve(err));
    });
    expect(error?.code).toBe('EFORBIDDEN');
    expect(error?.message).toMatch(/127\.0\.0\.1 \(loopback\)/);
    const allowed = await new Promise<string>((resolve, reject) => {
      guardedLookup(true)('localhost', { family: 4 }, (err, address) =>
        err ? reject(err) : resolve(address as string),
      );
    });
    expect(allowed).toBe('127.0.0.1');
  });
});

describe('webhook names at registration', () => {
  const resolvingTo = (addresses: string[]) => (): Promise<string[]> => Promise.resolve(addresses);

  it('refuses a name when any address it resolves to is refused, naming both and why', async () => {
    const url = new URL('http://vm:8080/hook');
    expect(await destinationRefusal(url, resolvingTo(['93.184.216.34', '127.0.0.1']))).toBe(
      'vm resolves to 127.0.0.1, which is not a public address (loopback)',
    );
    const refused = checkWebhookUrl(url.href, false, resolvingTo(['192.0.2.7']));
    await expect(refused).rejects.toThrow(AppError);
    await expect(refused).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'url: vm resolves to 192.0.2.7, which is not a public address (documentation)',
      details: { field: 'url' },
    });
  });

  it('accepts a name that resolves to public addresses only, or not at all', async () => {
    const url = 'https://hooks.example.com/x';
    expect((await checkWebhookUrl(url, false, resolvingTo(['93.184.216.34']))).href).toBe(url);
    // Delivery checks the addresses it connects to, whatever the name resolves to then.
    expect((await checkWebhookUrl(url, false, resolvingTo([]))).href).toBe(url);
  });

  it('resolves nothing when private URLs are allowed', async () => {
    const resolve = jest.fn(resolvingTo(['127.0.0.1']));
    expect((await checkWebhookUrl('http://vm:8080/', true, resolve)).host).toBe('vm:8080');
    expect(resolve).not.toHaveBeenCalled();
  });

  it('resolves as delivery does, through /etc/hosts', async () => {
    expect(await resolveName('localhost')).toContain('127.0.0.1');
  });
});
