import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionNotFoundError } from '@sandbox/sdk';
import { VERSION } from './program';
import { fakeCli, fakeSandbox } from './testing/fake-cli';

const COMMANDS = [
  'create',
  'ls',
  'info',
  'run',
  'exec',
  'cp',
  'terminal',
  'open',
  'ps',
  'logs',
  'watch',
  'kill',
  'rm',
];

describe('sandbox (its version and help)', () => {
  it('prints the package version', async () => {
    const packageJson = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    const cli = fakeCli();
    expect(await cli.run('--version')).toBe(0);
    expect(cli.stdout()).toBe(`${packageJson.version}\n`);
    expect(VERSION).toBe(packageJson.version);
  });

  it('lists every command, the environment and the exit codes in its help', async () => {
    const cli = fakeCli();
    expect(await cli.run('--help')).toBe(0);
    for (const name of COMMANDS) expect(cli.stdout()).toMatch(new RegExp(`\\n  ${name}\\b`));
    expect(cli.stdout()).toContain('SANDBOX_API_KEY');
    expect(cli.stdout()).toContain('Exit codes:');
    expect(cli.stdout()).toContain('130');
  });

  it.each(COMMANDS)('gives %s a help of its own: a usage line and an example', async (name) => {
    const cli = fakeCli();
    expect(await cli.run(name, '--help')).toBe(0);
    expect(cli.stdout()).toContain(`Usage: sandbox ${name} `);
    expect(cli.stdout()).toContain(`Examples:\n  $ sandbox ${name}`);
    // The global options show, so that each command's help is whole.
    expect(cli.stdout()).toContain('--api-url <url>');
    const viaHelp = fakeCli();
    expect(await viaHelp.run('help', name)).toBe(0);
    expect(viaHelp.stdout()).toBe(cli.stdout());
  });
});

describe('sandbox (its command line)', () => {
  it('exits 2 with the usage on stderr without a command, or with an unknown one', async () => {
    const none = fakeCli();
    expect(await none.run()).toBe(2);
    expect(none.stderr()).toContain('Usage: sandbox');
    const unknown = fakeCli();
    expect(await unknown.run('frobnicate')).toBe(2);
    expect(unknown.stderr()).toContain("sandbox: unknown command 'frobnicate'");
    expect(unknown.stdout()).toBe('');
  });

  it('has no global --json: it is an option of the commands that print a result', async () => {
    const cli = fakeCli();
    expect(await cli.run('--json', 'ls')).toBe(2);
    expect(cli.stderr()).toContain("unknown option '--json'");
  });
});

describe('sandbox (its API and output)', () => {
  it("shows a command's usage line after its usage error", async () => {
    const cli = fakeCli();
    expect(await cli.run('info')).toBe(2);
    expect(cli.stderr()).toContain("sandbox: missing required argument 'session'");
    expect(cli.stderr()).toContain('Usage: sandbox info [options] <session>');
    const extra = fakeCli();
    expect(await extra.run('info', 'ses_a', 'ses_b')).toBe(2);
  });

  it('reaches the API given by --api-url/--api-key (before or after the command), else $SANDBOX_…', async () => {
    const info = { sessionId: 'ses_a', state: 'active' };
    const connect = jest.fn(() =>
      Promise.resolve(fakeSandbox({ info: () => Promise.resolve(info) })),
    );
    const env = { SANDBOX_API_URL: 'http://env/v1', SANDBOX_API_KEY: 'sk_env' };
    const cli = fakeCli({ connect }, { env });
    await cli.run('--api-url', 'http://flag/v1', 'info', 'ses_a', '--api-key', 'sk_flag');
    await cli.run('info', 'ses_a');
    expect(cli.clients).toEqual([
      { apiUrl: 'http://flag/v1', apiKey: 'sk_flag' },
      { apiUrl: 'http://env/v1', apiKey: 'sk_env' },
    ]);
  });

  it("prints an API error as one line with its code and request id, and exits with its class's code", async () => {
    const gone = new SessionNotFoundError({
      code: 'session_not_found',
      status: 404,
      message: 'Session not found',
      requestId: 'req_1',
    });
    const cli = fakeCli({ connect: () => Promise.reject(gone) });
    expect(await cli.run('info', 'ses_a')).toBe(66);
    expect(cli.stderr()).toBe('sandbox: Session not found (session_not_found, request req_1)\n');
  });

  it('prints for people even when stdout is not a terminal; JSON only with --json', async () => {
    const info = { sessionId: 'ses_a', state: 'idle' };
    const connect = () => Promise.resolve(fakeSandbox({ info: () => Promise.resolve(info) }));
    const people = fakeCli({ connect });
    expect(await people.run('info', 'ses_a')).toBe(0);
    expect(people.stdout()).toBe('sessionId: ses_a\nstate: idle\n');
    const machines = fakeCli({ connect });
    expect(await machines.run('info', 'ses_a', '--json')).toBe(0);
    expect(JSON.parse(machines.stdout())).toEqual(info);
  });
});
