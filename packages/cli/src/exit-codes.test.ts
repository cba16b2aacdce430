import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import {
  ERROR_CLASSES,
  ExecutionTimeoutError,
  ForbiddenError,
  InternalServerError,
  InvalidRequestError,
  NetworkError,
  RateLimitedError,
  SandboxError,
  ServiceUnavailableError,
  SessionLimitExceededError,
  SessionNotFoundError,
  UnauthorizedError,
  type ApiErrorCode,
} from '@sandbox/sdk';
import { exitCodeOf, exitCodesHelp, OUTCOME_OF_API_ERROR, OUTCOMES } from './exit-codes';

const error = (ErrorClass: typeof SandboxError, code: string, status: number) =>
  new ErrorClass({ code, status, message: code });

describe('exit codes', () => {
  it('gives each outcome a code of its own', () => {
    const codes = Object.values(OUTCOMES).map((o) => o.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it.each([
    [UnauthorizedError, 'unauthorized', 401, 77],
    [ForbiddenError, 'forbidden', 403, 77],
    [SessionNotFoundError, 'session_not_found', 404, 66],
    [RateLimitedError, 'rate_limit_exceeded', 429, 75],
    [SessionLimitExceededError, 'session_limit_exceeded', 429, 75],
    [ServiceUnavailableError, 'service_unavailable', 503, 69],
    [NetworkError, 'network_error', 0, 69],
    [InvalidRequestError, 'invalid_request', 400, 65],
    [InternalServerError, 'internal_error', 500, 70],
    [ExecutionTimeoutError, 'execution_timeout', 408, 124],
  ] as const)('exits %p (%s) with %s', (ErrorClass, code, status, exit) => {
    expect(exitCodeOf(error(ErrorClass, code, status))).toBe(exit);
  });

  it("classes every error the SDK makes from the API's codes by the table", () => {
    for (const [code, ErrorClass] of Object.entries(ERROR_CLASSES)) {
      const outcome = OUTCOME_OF_API_ERROR[code as ApiErrorCode];
      expect([code, exitCodeOf(error(ErrorClass, code, 400))]).toEqual([
        code,
        OUTCOMES[outcome].code,
      ]);
    }
  });

  it('classes a code it does not know by its HTTP status', () => {
    expect(exitCodeOf(error(SandboxError, 'teapot_gone', 404))).toBe(66);
    expect(exitCodeOf(error(SandboxError, 'http_error', 502))).toBe(69);
    expect(exitCodeOf(error(SandboxError, 'http_error', 418))).toBe(65);
    expect(exitCodeOf(error(SandboxError, 'brand_new', 500))).toBe(70);
  });

  it("classes the SDK's own failures: no API key is auth, the rest the CLI's", () => {
    expect(exitCodeOf(error(SandboxError, 'missing_api_key', 0))).toBe(77);
    expect(exitCodeOf(error(SandboxError, 'missing_fetch', 0))).toBe(1);
    expect(exitCodeOf(new Error('ENOENT: no such file'))).toBe(1);
  });

  it("gives commander's help and version 0, and its usage errors 2", () => {
    expect(exitCodeOf(new CommanderError(0, 'commander.helpDisplayed', ''))).toBe(0);
    expect(exitCodeOf(new CommanderError(0, 'commander.version', ''))).toBe(0);
    expect(exitCodeOf(new CommanderError(1, 'commander.unknownOption', ''))).toBe(2);
    expect(exitCodeOf(new CommanderError(1, 'commander.help', ''))).toBe(2);
  });

  it('documents in the CLI README exactly the table --help shows', () => {
    const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Exit codes'));
    const rows = [...section.matchAll(/^\| (\S+) +\| (.+?) +\|$/gm)]
      .map(([, code, meaning]) => `${code} ${meaning}`)
      .filter((row) => !row.startsWith('Code ') && !row.startsWith('-'));
    const help = exitCodesHelp()
      .split('\n')
      .slice(1)
      .map((line) => line.trim().replace(/ +/, ' '));
    expect(rows).toEqual(help);
  });
});
