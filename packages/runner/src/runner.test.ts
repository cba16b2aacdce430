import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codeSource, CODE_PRELUDE } from './code-file';
import { listFiles } from './files';
import {
  asPathError,
  lexicalDir,
  lexicalPath,
  makeDirectories,
  prepareParent,
  resolveExisting,
} from './workspace-path';

/** What a refusal for a bad path throws (an asymmetric matcher, typed as toThrow takes it). */
const invalidPath: Error = expect.objectContaining({ name: 'RunnerError', code: 'invalid_path' });

describe('lexicalPath', () => {
  it('resolves relative paths inside the root', () => {
    expect(lexicalPath('a/b/../c.txt', '/w')).toBe('/w/a/c.txt');
  });

  it.each(['../x', '/etc/passwd', 'a/../../x', 'a\0b'])('refuses %j', (path) => {
    expect(() => lexicalPath(path, '/w')).toThrow(invalidPath);
  });

  it('accepts absolute working directories under the root only', () => {
    expect(lexicalDir('/w/app', '/w')).toBe('/w/app');
    expect(() => lexicalDir('/etc', '/w')).toThrow(invalidPath);
  });
});

describe('symlink checks', () => {
  const root = mkdtempSync(join(tmpdir(), 'ws-'));
  const outside = mkdtempSync(join(tmpdir(), 'out-'));
  mkdirSync(join(root, 'real'));
  writeFileSync(join(root, 'real', 'f.txt'), 'x');
  writeFileSync(join(outside, 'secret'), 's');
  symlinkSync(join(root, 'real'), join(root, 'alias'));
  symlinkSync(outside, join(root, 'escape'));
  symlinkSync(join(outside, 'nothing-here'), join(root, 'dangling-out'));
  symlinkSync(join(root, 'loop-b'), join(root, 'loop-a'));
  symlinkSync(join(root, 'loop-a'), join(root, 'loop-b'));

  it('follows links that stay inside and refuses links that leave', async () => {
    await expect(resolveExisting('alias/f.txt', root)).resolves.toBe(join(root, 'real', 'f.txt'));
    await expect(resolveExisting('escape/secret', root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    await expect(resolveExisting('missing', root)).rejects.toMatchObject({
      code: 'file_not_found',
    });
  });

  it('answers alike whether or not what a link outside points to exists', async () => {
    for (const path of ['escape/secret', 'escape/no-such-file', 'dangling-out']) {
      await expect(resolveExisting(path, root)).rejects.toMatchObject({ code: 'invalid_path' });
    }
  });

  it('tells a link loop as a bad path', async () => {
    const err = await resolveExisting('loop-a', root).catch((e: unknown) => asPathError(e, root));
    expect(err).toMatchObject({ code: 'invalid_path', details: { path: 'loop-a' } });
  });

  it('never creates directories through a link that leaves', async () => {
    await expect(prepareParent('escape/new/file.txt', root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    await expect(prepareParent('fresh/dir/file.txt', root)).resolves.toBe(
      join(root, 'fresh', 'dir', 'file.txt'),
    );
    await expect(
      makeDirectories('escape/made', join(root, 'escape/made'), root),
    ).rejects.toMatchObject({ code: 'invalid_path' });
    expect(existsSync(join(outside, 'made'))).toBe(false);
  });
});

describe('codeSource', () => {
  it('adds the prelude on the first line, keeping line numbers and a shebang', () => {
    expect(codeSource('a\nb')).toBe(`${CODE_PRELUDE}a\nb`);
    expect(codeSource('#!/usr/bin/env node\nx')).toBe(`#!/usr/bin/env node\n${CODE_PRELUDE}x`);
  });
});

describe('listFiles', () => {
  const root = mkdtempSync(join(tmpdir(), 'list-'));
  mkdirSync(join(root, 'd'));
  for (const name of ['b.txt', 'a.txt', 'd/c.txt', `${'x'.repeat(200)}.txt`]) {
    writeFileSync(join(root, name), 'data');
  }

  it('returns one page of the sorted listing and counts them all', async () => {
    const listing = await listFiles('', { offset: 1, limit: 2 }, root);
    expect(listing.files.map((f) => f.path)).toEqual(['b.txt', 'd/c.txt']);
    expect(listing).toMatchObject({ total: 4, truncated: false });
  });

  it('stops a page before its entries pass the byte budget', async () => {
    const listing = await listFiles('', { offset: 0, limit: 10, maxBytes: 400 }, root);
    expect(listing.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt', 'd/c.txt']);
    expect(listing.total).toBe(4);
  });
});
