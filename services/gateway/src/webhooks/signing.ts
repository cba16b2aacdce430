import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Standard Webhooks (https://www.standardwebhooks.com): secrets, headers and signatures. */

const SECRET_PREFIX = 'whsec_';
/** Receivers refuse messages whose timestamp is further than this from their clock. */
export const TIMESTAMP_TOLERANCE_S = 5 * 60;

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

function secretKey(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` */
export function sign(secret: string, id: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampS}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signedHeaders(
  secret: string,
  id: string,
  timestampS: number,
  body: string,
): WebhookHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': sign(secret, id, timestampS, body),
  };
}

/**
 * What a receiver does: true when one of the header's signatures matches and the timestamp is
 * within the tolerance of `nowS`.
 */
export function verify(
  secret: string,
  headers: Partial<Record<keyof WebhookHeaders, string | undefined>>,
  body: string,
  nowS = Math.floor(Date.now() / 1000),
): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  const timestampS = Number(timestamp);
  if (Math.abs(nowS - timestampS) > TIMESTAMP_TOLERANCE_S) return false;
  const expected = Buffer.from(sign(secret, id, timestampS, body).slice('v1,'.length), 'base64');
  return signatures.split(' ').some((candidate) => {
    const [version, mac] = candidate.split(',');
    if (version !== 'v1' || mac === undefined) return false;
    const given = Buffer.from(mac, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
