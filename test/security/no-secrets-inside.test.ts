import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { RUNNER_FRONT_PATH, WORKSPACE } from '@sandbox/contract';
import { createAccountAt } from '../support/api';
import type { ApiClient } from '../support/api-client';
import { requiredEnv } from '../support/env';
import {
  containerProcesses,
  docker,
  MANUAL_SWEEPS,
  onGvisor,
  sessionContainer,
} from '../support/stack';
import { useStack } from '../support/use-stack';

/**
 * No secret of the service or of the integrator is inside a sandbox (issue 40). On gVisor the
 * user can read the environ of the root-owned front, runner, spawner and init (docs/security.md),
 * so that they hold none is an invariant, checked here on both runtimes: every secret the stack
 * takes is a canary, and neither the sandbox user nor `docker inspect` finds one.
 *
 * The leak this catches: the agent handing its own environment (where a deployed agent keeps
 * INTERNAL_TOKEN, METRICS_TOKEN and the S3 credentials) or one of its settings to the sandbox,
 * in the container's `Env` (inspect; every process's environ), in the `Env` of the runner's
 * `docker exec` (the runner's environ, and every run's, which inherits it), in a label, a mount
 * or a file it writes into the sandbox (the file search).
 */

const canary = (what: string): string => `canary-${what}-${randomBytes(8).toString('hex')}`;

/**
 * The services' settings as a deployment's environment holds them. They are also put in this
 * file's `process.env` (jest gives each test file a copy of its own): the agent runs in this
 * process, so an agent passing its environment on passes them.
 */
const ENVIRONMENT = {
  INTERNAL_TOKEN: canary('internal'),
  ADMIN_TOKEN: canary('admin'),
  // 32 bytes in base64, as SECRETS_KEY must be; its first 16 characters are 12 whole bytes.
  SECRETS_KEY: `canarySecretsKey${randomBytes(20).toString('base64')}`,
  METRICS_TOKEN: canary('agent-metrics'),
  // The AWS SDK's chain reads these: the S3 blob store's credentials.
  AWS_ACCESS_KEY_ID: canary('aws-key-id'),
  AWS_SECRET_ACCESS_KEY: canary('aws-secret'),
};
const GATEWAY_METRICS_TOKEN = canary('gateway-metrics');

const previous = new Map<string, string | undefined>();
beforeAll(() => {
  for (const [name, value] of Object.entries(ENVIRONMENT)) {
    previous.set(name, process.env[name]);
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of previous) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

// The stack's own `adminToken` and `internalToken` are replaced by the canaries.
const t = useStack({
  agentEnv: {
    INTERNAL_TOKEN: ENVIRONMENT.INTERNAL_TOKEN,
    METRICS_PORT: '0',
    METRICS_TOKEN: ENVIRONMENT.METRICS_TOKEN,
    // Never called here (no session sleeps): port 9 is closed.
    BLOB_STORE: 's3',
    BLOB_STORE_S3_BUCKET: 'sessions',
    BLOB_STORE_S3_ENDPOINT: 'http://127.0.0.1:9',
    BLOB_STORE_S3_FORCE_PATH_STYLE: 'true',
  },
  gatewayEnv: {
    ...MANUAL_SWEEPS,
    INTERNAL_TOKEN: ENVIRONMENT.INTERNAL_TOKEN,
    ADMIN_TOKEN: ENVIRONMENT.ADMIN_TOKEN,
    SECRETS_KEY: ENVIRONMENT.SECRETS_KEY,
    METRICS_PORT: '0',
    METRICS_TOKEN: GATEWAY_METRICS_TOKEN,
  },
});

let api: ApiClient;
let sessionId: string;
/** Every secret to look for, in each form it could take. */
let secrets: string[];

beforeAll(async () => {
  const account = await createAccountAt(
    { url: t.stack.url, adminToken: ENVIRONMENT.ADMIN_TOKEN },
    'paid',
  );
  api = t.as(account.key);
  // A webhook's signing secret (it subscribes to an event no test here causes).
  const hook = await api.post<{ secret: string }>('/v1/webhooks', {
    url: 'http://127.0.0.1:9/hook',
    events: ['session.expired'],
  });
  expect(hook.status).toBe(201);
  // A whole CPU: the scan below reads every file the user can, and at 0.25 CPU it took 46 s
  // on gVisor. What the user can read does not depend on it.
  sessionId = await api.createSession({ resourceLimits: { cpu: 1 } });
  // A code run: the runner starts, and a zygote waits for the next one.
  expect((await api.execute(sessionId, { code: 'console.log(1)' })).status).toBe(200);
  secrets = [
    ...Object.values(ENVIRONMENT),
    GATEWAY_METRICS_TOKEN,
    Buffer.from(ENVIRONMENT.SECRETS_KEY, 'base64').toString('hex'),
    account.key,
    hook.body.secret,
    hook.body.secret.slice('whsec_'.length),
    // The stores' URLs, where they carry a password.
    ...[requiredEnv('TEST_DATABASE_URL'), requiredEnv('TEST_REDIS_URL')].filter(
      (url) => new URL(url).password !== '',
    ),
  ];
});

/** What the scan searches recursively, besides every mount but /, /proc, /sys and /dev. */
const SCANNED = ['/etc', '/opt', '/run', '/tmp', '/home', '/root', '/var', '/srv', WORKSPACE];

/**
 * A scan, run as the user, printing `found in <where>: …` for each secret it finds, then
 * what it read: `environ <pid> read|refused <command line>` per process, `own environment:
 * PATH=…`, `files <count of readable files searched>`, and `scan: complete` at its end.
 */
function scanScript(needles: readonly string[]): string {
  // The secrets reach it encoded: written out, they would be in its own command line.
  const encoded = Buffer.from(`${needles.join('\n')}\n`).toString('base64');
  return [
    'needles=/tmp/.needles-$$',
    `printf %s '${encoded}' | base64 -d > "$needles"`,
    'hits() { grep -F -f "$needles" | sed "s|^|found in $1: |"; }',
    // Every process's command line and, where readable, environment.
    'for dir in /proc/[0-9]*; do',
    "  args=$(tr '\\0' ' ' 2>/dev/null < \"$dir/cmdline\")",
    '  printf "%s\\n" "$args" | hits "$dir/cmdline"',
    "  if environ=$(tr '\\0' '\\n' 2>/dev/null < \"$dir/environ\"); then",
    '    echo "environ ${dir#/proc/} read $args"',
    '    printf "%s\\n" "$environ" | hits "$dir/environ"',
    '  else',
    '    echo "environ ${dir#/proc/} refused $args"',
    '  fi',
    'done',
    'env | hits "its own environment"',
    "tr '\\0' '\\n' < /proc/$$/environ | grep '^PATH=' | sed 's/^/own environment: /'",
    // Files: the directories above and every mount (the session's disk, /etc/hosts, the CA
    // bundle…), devices, FIFOs and sockets skipped.
    'mounts=',
    'while read -r _ target _; do',
    '  case $target in',
    '    / | /proc | /proc/* | /sys | /sys/* | /dev | /dev/*) ;;',
    '    *) mounts="$mounts $target" ;;',
    '  esac',
    'done < /proc/mounts',
    `places="${SCANNED.join(' ')} /proc/self $mounts"`,
    'echo "files $(timeout 60 find -H $places -type f -readable 2>/dev/null | wc -l)"',
    'found=$(timeout 90 grep -rIlsF -D skip -f "$needles" --exclude=".needles-$$" $places 2>/dev/null)',
    '[ $? = 124 ] && echo "timed out: the file search"',
    'printf "%s\\n" "$found" | sort -u | sed "/^$/d; s/^/found in file: /"',
    'rm -f "$needles"',
    'echo "scan: complete"',
  ].join('\n');
}

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number;
}

it('runs the services with canary secrets', () => {
  const { agentConfig, gatewayConfig } = t.stack;
  expect(agentConfig.internalToken).toBe(ENVIRONMENT.INTERNAL_TOKEN);
  expect(agentConfig.metrics.token).toBe(ENVIRONMENT.METRICS_TOKEN);
  expect(agentConfig.blobStore.kind).toBe('s3');
  expect(gatewayConfig.internalToken).toBe(ENVIRONMENT.INTERNAL_TOKEN);
  expect(gatewayConfig.adminToken).toBe(ENVIRONMENT.ADMIN_TOKEN);
  expect(gatewayConfig.metrics.token).toBe(GATEWAY_METRICS_TOKEN);
  expect(gatewayConfig.secretsKey?.toString('base64')).toBe(ENVIRONMENT.SECRETS_KEY);
});

it('leaves no secret anywhere the sandbox user can read', async () => {
  const response = await api.execute<Run>(sessionId, {
    command: scanScript(secrets),
    timeout: 150,
  });
  expect(response.status).toBe(200);
  const { stdout } = response.body;
  const lines = stdout.split('\n');
  expect(lines.filter((line) => line.startsWith('found in '))).toEqual([]);

  // It read what it should: to its end, in time, its own environment, files, every process.
  expect(lines).toContain('scan: complete');
  expect(lines.filter((line) => line.startsWith('timed out'))).toEqual([]);
  expect(stdout).toMatch(/^own environment: PATH=\//m);
  expect(Number(/^files (\d+)$/m.exec(stdout)?.[1])).toBeGreaterThan(100);
  const environs = lines.filter((line) => line.startsWith('environ '));
  expect(environs.some((line) => line.startsWith('environ 1 '))).toBe(true);
  // The runner's environment: the user reads it on gVisor, which checks only the effective uid
  // (docs/security.md), so there the scan above searched it; runc refuses it (the case below
  // reads it from the host).
  const runner = environs.find((line) =>
    / node (--no-memory-reducer )?\/opt\/sandbox\/runner\/main\.js ?$/.test(line),
  );
  expect(runner?.split(' ')[2]).toBe(onGvisor ? 'read' : 'refused');
}, 200_000);

it('gives the container no secret (docker inspect: env, mounts, labels, args)', async () => {
  const container = await sessionContainer(sessionId);
  const inspected = JSON.stringify(await docker.getContainer(container!.Id).inspect());
  expect(inspected).toContain('"Env":[');
  expect(secrets.filter((secret) => inspected.includes(secret))).toEqual([]);
});

// gVisor's processes are its Sentry's, not the host's; there the user's scan reads the runner's.
(onGvisor ? it.skip : it)(
  "gives the sandbox's processes no secret (runc: every environ, read from the host)",
  async () => {
    const processes = await containerProcesses(t.stack.nodeId, sessionId);
    const environs = await Promise.all(
      processes.map(async ({ pid, args }) => ({
        args,
        // A process may have ended since the list.
        environ: await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => ''),
      })),
    );
    expect(environs.find(({ args }) => args === RUNNER_FRONT_PATH)?.environ).toMatch(/PATH=/);
    const found = environs.flatMap(({ args, environ }) =>
      secrets.filter((secret) => environ.includes(secret)).map((secret) => `${args}: ${secret}`),
    );
    expect(found).toEqual([]);
  },
);
