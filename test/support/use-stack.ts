import { createAccount, type Plan, type TestAccount } from './api';
import { ApiClient } from './api-client';
import { startStack, type StackOptions, type TestStack } from './stack';

/**
 * One stack for the tests of a file (or of a `describe`): started before the first test,
 * stopped after the last. Its parts are read through the handle, which answers only once they
 * exist (a test file's top level runs before `beforeAll`).
 */
export interface StackFixture {
  readonly stack: TestStack;
  /** The API as `key` sees it on this stack's first gateway. */
  as: (key: string) => ApiClient;
  /** Runs `close` after the last test, before the stack stops (last registered, first run). */
  beforeStop: (close: () => unknown) => void;
}

export interface AccountFixture extends StackFixture {
  /** An account made with the stack. */
  readonly account: TestAccount;
  /** The API as the account's key sees it. */
  readonly api: ApiClient;
  /** A session of the account made with the stack (only with `session: true`). */
  readonly sessionId: string;
}

function ready<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is not there: read it inside a test or hook`);
  return value;
}

/** Registers `beforeAll`/`afterAll` for one stack started with `options`. */
export function useStack(options: StackOptions = {}): StackFixture {
  let stack: TestStack | undefined;
  const closers: (() => unknown)[] = [];
  beforeAll(async () => {
    stack = await startStack(options);
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await stack?.stop();
  });
  return {
    get stack() {
      return ready(stack, 'the stack');
    },
    as(key) {
      return new ApiClient(ready(stack, 'the stack'), key);
    },
    beforeStop(close) {
      closers.push(close);
    },
  };
}

/**
 * `fixture` and, read through it, the fields `make` makes in a `beforeAll` of its own (after
 * the stack started).
 */
function withMade<T extends object>(
  fixture: StackFixture,
  fields: readonly (keyof T)[],
  make: () => Promise<T>,
): StackFixture & T {
  let made: T | undefined;
  beforeAll(async () => {
    made = await make();
  });
  const extended = Object.defineProperties({}, Object.getOwnPropertyDescriptors(fixture));
  for (const field of fields) {
    Object.defineProperty(extended, field, { get: () => ready(made, String(field))[field] });
  }
  return extended as StackFixture & T;
}

/** One stack, as `useStack`, with an account on `plan` and, on request, one session of it. */
export function useStackWithAccount(
  plan: Plan = 'free',
  options: { stack?: StackOptions; session?: boolean } = {},
): AccountFixture {
  const fixture = useStack(options.stack);
  return withMade(fixture, ['account', 'api', 'sessionId'], async () => {
    const account = await createAccount(fixture.stack, plan);
    const api = fixture.as(account.key);
    const sessionId = options.session === true ? await api.createSession() : undefined;
    return {
      account,
      api,
      get sessionId() {
        return ready(sessionId, 'the session (ask for it with `session: true`)');
      },
    };
  });
}

export interface StrangerFixture extends StackFixture {
  /** The account whose sessions are under test, and the API as its key sees it. */
  readonly owner: TestAccount;
  readonly mine: ApiClient;
  /** Another account on the same plan, and the API as its key sees it. */
  readonly stranger: TestAccount;
  readonly theirs: ApiClient;
}

/** One stack, as `useStack`, with two accounts on `plan`: an owner and a stranger to it. */
export function useStackWithStranger(
  options: StackOptions = {},
  plan: Plan = 'paid',
): StrangerFixture {
  const fixture = useStack(options);
  return withMade(fixture, ['owner', 'mine', 'stranger', 'theirs'], async () => {
    const owner = await createAccount(fixture.stack, plan);
    const stranger = await createAccount(fixture.stack, plan);
    return { owner, mine: fixture.as(owner.key), stranger, theirs: fixture.as(stranger.key) };
  });
}
