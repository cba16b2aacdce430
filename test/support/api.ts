import type { TestStack } from './stack';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One HTTP request; the body is parsed as JSON when it is JSON. */
export async function call<T = Record<string, unknown>>(
  url: string,
  init: {
    method?: string;
    key?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const response = await fetch(url, { method: init.method ?? 'GET', headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export interface TestAccount {
  accountId: string;
  key: string;
  keyId: string;
}

export type Plan = 'free' | 'paid' | 'enterprise';
type AccountOptions = { limits?: Record<string, number | string>; scopes?: string[] };

/** Creates an account on `plan` with one key, through the admin API of the stack. */
export function createAccount(
  stack: TestStack,
  plan: Plan = 'free',
  options: AccountOptions = {},
): Promise<TestAccount> {
  return createAccountAt(stack, plan, options);
}

/** Creates an account on `plan` with one key, through the admin API of any gateway. */
export async function createAccountAt(
  stack: Pick<TestStack, 'url' | 'adminToken'>,
  plan: Plan = 'free',
  options: AccountOptions = {},
): Promise<TestAccount> {
  const admin = { key: stack.adminToken };
  const account = await call<{ id: string }>(`${stack.url}/admin/v1/accounts`, {
    ...admin,
    method: 'POST',
    body: { name: `test-${plan}`, plan, ...(options.limits ? { limits: options.limits } : {}) },
  });
  if (account.status !== 201) throw new Error(`account creation failed: ${account.text}`);
  const key = await call<{ id: string; key: string }>(
    `${stack.url}/admin/v1/accounts/${account.body.id}/keys`,
    {
      ...admin,
      method: 'POST',
      body: { name: 'test', ...(options.scopes ? { scopes: options.scopes } : {}) },
    },
  );
  if (key.status !== 201) throw new Error(`key creation failed: ${key.text}`);
  return { accountId: account.body.id, key: key.body.key, keyId: key.body.id };
}

/** A new session of `key`'s account; returns its id (throws unless created). */
export async function createSession(
  url: string,
  key: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const created = await call<{ sessionId: string }>(`${url}/v1/sessions/create`, {
    method: 'POST',
    key,
    body,
  });
  if (created.status !== 200) throw new Error(`session creation failed: ${created.text}`);
  return created.body.sessionId;
}
