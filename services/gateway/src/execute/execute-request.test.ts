import { AppError } from '@sandbox/errors';
import { FREE_PLAN } from '../limits/plan-fixtures';
import type { PlanLimits } from '../limits/plans';
import { resolveWorkingDir } from '../files/workspace-path';
import { planExecution } from './execute-request';

const free: PlanLimits = { ...FREE_PLAN, maxEnvVars: 2 };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof AppError)) return 'other';
    const field = err.details?.field;
    return `${err.code}:${typeof field === 'string' ? field : ''}`;
  }
  return undefined;
}

describe('planExecution', () => {
  it('applies the defaults', () => {
    expect(planExecution({ sessionId: 's', command: 'true' }, free, 30)).toEqual({
      sessionId: 's',
      program: { command: 'true' },
      files: [],
      env: {},
      workingDir: '/workspace',
      timeoutS: 30,
      stream: false,
      stdin: false,
      logBytes: free.maxOutputLogBytes,
    });
  });

  it('enforces the spec rules', () => {
    expect(codeOf(() => planExecution({ sessionId: 's' }, free, 30))).toBe(
      'invalid_request:command',
    );
    expect(codeOf(() => planExecution({ sessionId: 's', code: 'x', command: 'y' }, free, 30))).toBe(
      'invalid_request:code',
    );
    expect(
      codeOf(() => planExecution({ sessionId: 's', command: 'y', timeout: 31 }, free, 30)),
    ).toBe('invalid_request:timeout');
    expect(
      codeOf(() =>
        planExecution({ sessionId: 's', command: 'y', env: { A: '1', B: '2', C: '3' } }, free, 30),
      ),
    ).toBe('invalid_request:env');
    expect(
      codeOf(() => planExecution({ sessionId: 's', command: 'y', env: { 'A=B': '1' } }, free, 30)),
    ).toBe('invalid_request:env');
  });

  it('refuses env variables the kernel would refuse to start a process with', () => {
    const run = (env: Record<string, string>) => () =>
      planExecution({ sessionId: 's', command: 'y', env }, { ...free, maxEnvVars: 100 }, 30);
    expect(codeOf(run({ A: 'x'.repeat(128 * 1024 - 3) }))).toBeUndefined();
    expect(codeOf(run({ A: 'x'.repeat(128 * 1024 - 2) }))).toBe('invalid_request:env');
    const many = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`V${i}`, 'x'.repeat(120 * 1024)]),
    );
    expect(codeOf(run(many))).toBe('invalid_request:env');
  });

  it('refuses a command longer than the kernel takes for one argument', () => {
    const command = (length: number) => () =>
      planExecution({ sessionId: 's', command: 'x'.repeat(length) }, free, 30);
    expect(codeOf(command(128 * 1024 - 1))).toBeUndefined();
    expect(codeOf(command(128 * 1024))).toBe('invalid_request:command');
  });
});

describe('resolveWorkingDir', () => {
  it.each([
    [undefined, '/workspace'],
    ['app', '/workspace/app'],
    ['/workspace/a/../b', '/workspace/b'],
  ])('resolves %j to %j', (input, expected) => {
    expect(resolveWorkingDir(input)).toBe(expected);
  });

  it.each(['..', '/etc', '/workspace/../etc', 'a/../../x', 'a\0b', '/workspacex'])(
    'refuses %j',
    (input) => {
      expect(codeOf(() => resolveWorkingDir(input))).toBe('invalid_path:');
    },
  );
});
