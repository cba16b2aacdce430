import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** Decides how the receiver answers the n-th request (from 0): a status, or 'hang'. */
export type Answer = (n: number, received: ReceivedWebhook) => number | 'hang';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  answer: Answer;
  /** The most requests that were open at the same time. */
  maxOpen: number;
  /** Resolves once `predicate` holds for the received list (polled), or rejects after `ms`. */
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP endpoint on loopback that records every webhook request. */
export async function startWebhookReceiver(answer: Answer = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const hanging: ServerResponse[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    received,
    answer,
    maxOpen: 0,
    async waitFor(predicate, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (!predicate(received)) {
        if (Date.now() > deadline) {
          throw new Error(`webhook receiver: condition not met; got ${JSON.stringify(received)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  let open = 0;
  const server = createServer((req, res) => {
    open += 1;
    // Counted once the I/O already received has been handled: a sender that aborted one
    // request (its FIN is in) and then opened the next must not count as two at once.
    setImmediate(() => {
      receiver.maxOpen = Math.max(receiver.maxOpen, open);
    });
    res.on('close', () => (open -= 1));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      const n = received.length;
      received.push(entry);
      const status = receiver.answer(n, entry);
      if (status === 'hang') hanging.push(res);
      else res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/**
 * Standard Webhooks verification, written here from the specification rather than taken from
 * the service, so that a wrong signature in the service cannot pass by agreeing with itself.
 */
export function verifySignature(secret: string, received: ReceivedWebhook): boolean {
  const id = received.headers['webhook-id'];
  const timestamp = received.headers['webhook-timestamp'];
  const signature = received.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string') {
    return false;
  }
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.body}`).digest();
  return signature.split(' ').some((entry) => {
    const [version, mac = ''] = entry.split(',');
    const given = Buffer.from(mac, 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
