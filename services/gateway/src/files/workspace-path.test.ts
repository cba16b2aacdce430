import { AppError } from '@sandbox/errors';
import { entryRelativePath, workspaceRelativePath } from './workspace-path';

function refusal(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'other';
  }
  return undefined;
}

describe('entryRelativePath', () => {
  it('normalises entries of any kind, a trailing slash allowed', () => {
    expect(entryRelativePath('./a//b/../c/')).toBe('a/c');
    expect(entryRelativePath('dir/')).toBe('dir');
  });

  it('refuses the workspace itself however it is spelled, unless allowed', () => {
    for (const path of ['.', './', 'a/..', '']) {
      expect([path, refusal(() => entryRelativePath(path))]).toEqual([path, 'invalid_path']);
    }
    expect(entryRelativePath('.', { allowRoot: true })).toBe('');
  });

  it('refuses what leaves the workspace, as for a file', () => {
    for (const path of ['../x', '/etc', 'a/../../x', 'a\0b']) {
      expect([path, refusal(() => entryRelativePath(path, { allowRoot: true }))]).toEqual([
        path,
        'invalid_path',
      ]);
      expect(refusal(() => workspaceRelativePath(path))).toBe('invalid_path');
    }
  });
});
