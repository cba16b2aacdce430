import {
  bearerToken,
  cappedFilesWritten,
  isSessionId,
  MAX_FILES_WRITTEN,
  MAX_RUN_TIMEOUT_MS,
  parsePreviewTunnelTarget,
  previewLabelOf,
  previewRouteSchema,
  previewTunnelTarget,
  runDeadlines,
  sessionIdOfLabel,
  tokenMatches,
} from './index';

const id = `ses_${'a1'.repeat(12)}`;

describe('session ids', () => {
  it('accepts ses_ and 24 lowercase alphanumerics only', () => {
    expect(isSessionId(id)).toBe(true);
    for (const bad of [`ses_${'A'.repeat(24)}`, `ses_${'a'.repeat(23)}`, `x${id}`, 7, undefined]) {
      expect(isSessionId(bad)).toBe(false);
    }
  });

  it('maps a session to its preview label and back', () => {
    expect(previewLabelOf(id)).toBe(`ses-${'a1'.repeat(12)}`);
    expect(sessionIdOfLabel(previewLabelOf(id).slice('ses-'.length))).toBe(id);
  });
});

describe('tokens', () => {
  it('parses Bearer case-insensitively, and nothing else', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer  abc ')).toBe('abc');
    expect(bearerToken('abc')).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('matches only the expected token', () => {
    expect(tokenMatches('secret', 'secret')).toBe(true);
    expect(tokenMatches('secret2', 'secret')).toBe(false);
    expect(tokenMatches('', 'secret')).toBe(false);
    expect(tokenMatches(undefined, 'secret')).toBe(false);
  });

  it('checks against the token expected now when it changes (its digest is kept once made)', () => {
    // In this order: each check follows a change of the expected token.
    const checks: Array<[given: string, expected: string, matches: boolean]> = [
      ['first', 'first', true],
      ['first', 'second', false],
      ['second', 'second', true],
      ['second', 'first', false],
    ];
    expect(checks.map(([given, expected]) => tokenMatches(given, expected))).toEqual(
      checks.map(([, , matches]) => matches),
    );
  });
});

describe('run deadlines', () => {
  it('fire in order: runner, agent guard, gateway', () => {
    for (const timeoutMs of [1, 30_000, MAX_RUN_TIMEOUT_MS]) {
      const d = runDeadlines(timeoutMs);
      expect(d.runnerMs).toBe(timeoutMs);
      expect(d.agentGuardMs).toBeGreaterThan(d.runnerMs);
      expect(d.gatewayMs).toBeGreaterThan(d.agentGuardMs);
    }
  });

  it('clamps the run timeout to what any plan allows', () => {
    expect(runDeadlines(10 * MAX_RUN_TIMEOUT_MS).runnerMs).toBe(MAX_RUN_TIMEOUT_MS);
    expect(runDeadlines(0).runnerMs).toBe(1);
  });
});

describe('run results', () => {
  it('report written files once each, capped', () => {
    expect(cappedFilesWritten(['a', 'b', 'a'])).toEqual(['a', 'b']);
    const many = Array.from({ length: MAX_FILES_WRITTEN + 5 }, (_, i) => `f${i}`);
    expect(cappedFilesWritten(many)).toHaveLength(MAX_FILES_WRITTEN);
  });
});

describe('preview route', () => {
  it('is what the gateway sends and the edge accepts', () => {
    const route = { sessionId: id, nodeId: 'n1', previewAddress: '127.0.0.1:1', private: false };
    expect(previewRouteSchema.parse(route)).toEqual(route);
    expect(previewRouteSchema.safeParse({ ...route, private: undefined }).success).toBe(false);
    expect(previewRouteSchema.safeParse({ ...route, sessionId: 's' }).success).toBe(false);
  });
});

describe('preview tunnel target', () => {
  it('names one port of one session, and nothing else', () => {
    const target = { sessionId: id, port: 5173 };
    expect(parsePreviewTunnelTarget(previewTunnelTarget(target))).toEqual(target);
    for (const bad of [
      undefined,
      `${id}:0`,
      `${id}:65536`,
      `${id}:`,
      `${id}:80:80`,
      `ses_x:3000`,
      `127.0.0.1:3000`,
      `${id}:3000/`,
      ` ${id}:3000`,
    ]) {
      expect(parsePreviewTunnelTarget(bad)).toBeUndefined();
    }
  });
});
