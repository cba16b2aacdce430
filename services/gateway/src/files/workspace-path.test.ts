import { entryRelativePath, workspaceRelativePath } from './workspace-path';

/** What a refusal for a bad path throws (an asymmetric matcher, typed as toThrow takes it). */
const invalidPath: Error = expect.objectContaining({ name: 'AppError', code: 'invalid_path' });

describe('entryRelativePath', () => {
  it('normalises entries of any kind, a trailing slash allowed', () => {
    expect(entryRelativePath('./a//b/../c/')).toBe('a/c');
    expect(entryRelativePath('dir/')).toBe('dir');
  });

  it.each(['.', './', 'a/..', ''])('refuses the workspace itself spelled %j', (path) => {
    expect(() => entryRelativePath(path)).toThrow(invalidPath);
  });

  it('allows the workspace itself when asked', () => {
    expect(entryRelativePath('.', { allowRoot: true })).toBe('');
  });

  it.each(['../x', '/etc', 'a/../../x', 'a\0b'])('refuses %j, as for a file', (path) => {
    expect(() => entryRelativePath(path, { allowRoot: true })).toThrow(invalidPath);
    expect(() => workspaceRelativePath(path)).toThrow(invalidPath);
  });
});
