import type { RunningGateway } from '@sandbox/gateway';
import { call, type ApiResponse, type TestAccount } from '../api';
import type { DocumentedResponses, OpenApiDoc } from '../openapi-conformance';
import type { Slowness } from '../slow-runtime';
import type { TestStack } from '../stack';

/**
 * What the cases of openapi.test.ts share: the stack and its two cut-off gateways, the served
 * document, the main account and its session. The test file fills it in `beforeAll`; the cases
 * (one module per topic, under this folder) read it when they run.
 */
export interface OpenApiContext {
  stack: TestStack;
  /** A gateway that knows no node: 503 service_unavailable. */
  noAgent: RunningGateway;
  /** A gateway whose Redis is out of reach. */
  noRedis: RunningGateway;
  documented: DocumentedResponses;
  doc: OpenApiDoc;
  /** The free account most cases use. */
  account: TestAccount;
  /** The session `createSession` made, deleted by `deleteSession`. */
  sessionId: string;
  slowness: Slowness;
  /** Waits until the warm pool is full (operations time out after 3 s: no cold create). */
  poolFull: () => Promise<void>;
}

/**
 * The session-operation timeout here, short so that the 408s are quick to provoke, and the
 * node's delay that provokes them. At 1 s, an egress PUT on a machine busy with other suites
 * took longer than the timeout: the 200 it is documented with went unseen (a flaky CI run).
 */
export const OP_TIMEOUT_MS = 3000;
const SLOWER_THAN_TIMEOUT_MS = OP_TIMEOUT_MS + 1500;

/** The helpers every case module uses, bound to `t`. */
export function openApiHelpers(t: OpenApiContext) {
  return {
    /** Asserts `response` is documented for `method path` and matches its schema. */
    expectDocumented: (method: string, path: string, response: ApiResponse<unknown>) =>
      t.documented.check(method, path, response),
    v1: (path: string) => `${t.stack.url}/v1${path}`,
    post: (path: string, key: string | undefined, body: unknown, url = t.stack.url) =>
      call(`${url}/v1${path}`, { method: 'POST', ...(key ? { key } : {}), body }),
    /** `request` answered while the node is slower than the operation timeout (a 408). */
    slowly: async <T>(request: () => Promise<T>): Promise<T> => {
      t.slowness.delayMs = SLOWER_THAN_TIMEOUT_MS;
      try {
        return await request();
      } finally {
        t.slowness.delayMs = 0;
      }
    },
  };
}
