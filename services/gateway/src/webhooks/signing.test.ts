import { newWebhookSecret, sign, signedHeaders, verify } from './signing';

describe('Standard Webhooks signing', () => {
  it('matches the specification test vector', () => {
    expect(
      sign(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('verifies its own headers and refuses changed bodies, other secrets and old timestamps', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const now = 1_800_000_000;
    const headers = signedHeaders(secret, 'msg_1', now, '{"a":1}');
    expect(verify(secret, headers, '{"a":1}', now)).toBe(true);
    expect(verify(secret, headers, '{"a":2}', now)).toBe(false);
    expect(verify(newWebhookSecret(), headers, '{"a":1}', now)).toBe(false);
    expect(verify(secret, headers, '{"a":1}', now + 301)).toBe(false);
    expect(verify(secret, { ...headers, 'webhook-id': 'msg_2' }, '{"a":1}', now)).toBe(false);
  });

  it('accepts a header listing several signatures when one matches', () => {
    const secret = newWebhookSecret();
    const headers = signedHeaders(secret, 'msg_1', 100, 'x');
    const several = `v1,AAAA ${headers['webhook-signature']}`;
    expect(verify(secret, { ...headers, 'webhook-signature': several }, 'x', 100)).toBe(true);
  });
});
