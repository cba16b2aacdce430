import { Sandbox } from '@sandbox/sdk';
import { createAccount, type TestAccount } from '../api';
import type { StackFixture } from '../use-stack';

/**
 * What the cases of sdk.test.ts share: the stack, a paid account's client options, and
 * sandboxes made per `describe`. The cases, one module per topic, are in this folder.
 */
export interface SdkContext {
  t: StackFixture;
  /** The SDK's options for the paid account on this stack; through `apiUrl` (a proxy) if given. */
  client: (apiUrl?: string) => { apiKey: string; apiUrl: string };
  /** One sandbox for the tests of a `describe`, deleted after them. */
  useSandbox: () => { readonly sandbox: Sandbox };
}

/** Registers the paid account's creation (`beforeAll`) on the stack of `t`. */
export function sdkContext(t: StackFixture): SdkContext {
  let paid: TestAccount | undefined;
  beforeAll(async () => {
    paid = await createAccount(t.stack, 'paid');
  });
  const client = (apiUrl = `${t.stack.url}/v1`) => {
    if (paid === undefined) throw new Error('the account is made in beforeAll');
    return { apiKey: paid.key, apiUrl };
  };
  const useSandbox = () => {
    let sandbox: Sandbox | undefined;
    beforeAll(async () => {
      sandbox = await Sandbox.create(client());
    });
    afterAll(() => sandbox?.delete());
    return {
      get sandbox() {
        if (sandbox === undefined) throw new Error('the sandbox is made in beforeAll');
        return sandbox;
      },
    };
  };
  return { t, client, useSandbox };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `path` exists in the session, asked through the SDK. */
export const exists = async (sandbox: Sandbox, path: string) =>
  (await sandbox.exec(`test -e ${path}`)).exitCode === 0;
