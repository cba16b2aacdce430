import { parseArgs } from 'node:util';
import { AppError } from '@sandbox/errors';
import { AdminClient } from './admin-client';

export const USAGE = `Usage: sandboxctl [--url URL] [--token TOKEN] <command>

Commands:
  accounts create --name NAME --plan free|paid|enterprise [--limits JSON]
  accounts update ACCOUNT_ID [--plan free|paid|enterprise] [--limits JSON] [--name NAME]
  accounts list
  accounts get ACCOUNT_ID
  keys create --account ACCOUNT_ID [--name NAME] [--scopes sessions,execute,files,processes,webhooks]
  keys list --account ACCOUNT_ID
  keys revoke KEY_ID
  nodes list
  nodes get NODE_ID
  nodes add NODE_ID --address HOST:PORT
  nodes cordon NODE_ID      no new session on it; its sessions stay
  nodes uncordon NODE_ID
  nodes drain NODE_ID       moves its sessions to other nodes (needs a shared blob store)
  nodes remove NODE_ID      once it holds no session that cannot wake elsewhere
  nodes remove NODE_ID --lost
                            a node gone for good (down): its other sessions end (session.lost)

--url defaults to $SANDBOX_ADMIN_URL (http://127.0.0.1:8080), --token to $ADMIN_TOKEN.
Output is JSON; an account shows its plan's limits as they apply ("limits"). --limits (enterprise
only) takes e.g. '{"requestsPerMinute":5000,"maxConcurrentSessions":500}' and replaces the
account's custom values ({} clears them). A new key's value is printed once, in the "key" field.`;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export interface CliDefaults {
  adminUrl: string;
  adminToken: string | undefined;
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') {
    throw new AppError('invalid_request', `${flag} is required`);
  }
  return value;
}

function parseLimits(value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new AppError('invalid_request', '--limits must be a JSON object');
  }
}

/** Runs one sandboxctl command; returns the process exit code. */
export async function runCli(
  argv: readonly string[],
  defaults: CliDefaults,
  io: CliIo,
  fetchImpl: typeof fetch = fetch,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        name: { type: 'string' },
        plan: { type: 'string' },
        limits: { type: 'string' },
        account: { type: 'string' },
        scopes: { type: 'string' },
        address: { type: 'string' },
        lost: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [group, action, target] = positionals;
  if (values.help === true || group === undefined) {
    io.out(`${USAGE}\n`);
    return values.help === true ? 0 : 2;
  }
  try {
    const token = values.token ?? defaults.adminToken;
    if (token === undefined)
      throw new AppError('unauthorized', 'No admin token: pass --token or set ADMIN_TOKEN');
    const client = new AdminClient(values.url ?? defaults.adminUrl, token, fetchImpl);
    const result = await dispatch(client, `${group} ${action ?? ''}`.trim(), target, values);
    io.out(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    const message = err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
    io.err(`sandboxctl: ${message}\n`);
    return 1;
  }
}

type Values = Record<string, string | boolean | undefined>;

const nodePath = (target: string | undefined): string =>
  `/nodes/${encodeURIComponent(required(target, 'NODE_ID'))}`;

async function dispatch(
  client: AdminClient,
  command: string,
  target: string | undefined,
  values: Values,
): Promise<unknown> {
  const str = (name: string): string | undefined =>
    typeof values[name] === 'string' ? values[name] : undefined;
  switch (command) {
    case 'accounts create':
      return client.request('POST', '/accounts', {
        name: required(str('name'), '--name'),
        plan: required(str('plan'), '--plan'),
        limits: parseLimits(str('limits')),
      });
    case 'accounts update':
      return client.request(
        'PATCH',
        `/accounts/${encodeURIComponent(required(target, 'ACCOUNT_ID'))}`,
        {
          ...(str('name') === undefined ? {} : { name: str('name') }),
          ...(str('plan') === undefined ? {} : { plan: str('plan') }),
          ...(str('limits') === undefined ? {} : { limits: parseLimits(str('limits')) }),
        },
      );
    case 'accounts list':
      return client.request('GET', '/accounts');
    case 'accounts get':
      return client.request(
        'GET',
        `/accounts/${encodeURIComponent(required(target, 'ACCOUNT_ID'))}`,
      );
    case 'keys create':
      return client.request(
        'POST',
        `/accounts/${encodeURIComponent(required(str('account'), '--account'))}/keys`,
        {
          name: str('name') ?? '',
          ...(str('scopes') === undefined ? {} : { scopes: str('scopes')?.split(',') }),
        },
      );
    case 'keys list':
      return client.request(
        'GET',
        `/accounts/${encodeURIComponent(required(str('account'), '--account'))}/keys`,
      );
    case 'keys revoke':
      return client.request(
        'POST',
        `/keys/${encodeURIComponent(required(target, 'KEY_ID'))}/revoke`,
      );
    case 'nodes list':
      return client.request('GET', '/nodes');
    case 'nodes add':
      return client.request('POST', '/nodes', {
        nodeId: required(target, 'NODE_ID'),
        address: required(str('address'), '--address'),
      });
    case 'nodes get':
      return client.request('GET', nodePath(target));
    case 'nodes cordon':
    case 'nodes uncordon':
    case 'nodes drain':
      return client.request('POST', `${nodePath(target)}/${command.slice('nodes '.length)}`);
    case 'nodes remove':
      if (values.lost === true) return client.request('DELETE', `${nodePath(target)}?lost=true`);
      await client.request('DELETE', nodePath(target));
      return { removed: target };
    default:
      throw new AppError('invalid_request', `Unknown command "${command}"\n\n${USAGE}`);
  }
}
