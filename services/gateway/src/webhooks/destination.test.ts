import { guardedLookup, isForbiddenAddress, parseWebhookUrl } from './destination';

describe('webhook destinations', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '::7f00:1',
    '::ffff:0:7f00:1',
    '64:ff9b:1::a9fe:a9fe',
    '2002:a9fe:a9fe::',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    'fec0::1',
    '168.63.129.16',
    'not-an-ip',
  ])('forbids %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111'])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  it.each([
    ['ftp://example.com/hook', /http or https/],
    ['https://user:pass@example.com/hook', /credentials/],
    ['http://169.254.169.254/latest', /public address/],
    ['http://[::1]:8080/', /public address/],
    ['http://localhost:8080/', /public address/],
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
    const allowed = await new Promise<string>((resolve, reject) => {
      guardedLookup(true)('localhost', { family: 4 }, (err, address) =>
        err ? reject(err) : resolve(address as string),
      );
    });
    expect(allowed).toBe('127.0.0.1');
  });
});
