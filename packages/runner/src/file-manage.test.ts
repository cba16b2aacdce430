import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { entryPath, makeDirectory, removeEntry, renameEntry, statEntry } from './file-manage';

/** A workspace with a file, a directory, links inside and out, and a secret outside. */
function workspace(): { root: string; outside: string } {
  const root = mkdtempSync(join(tmpdir(), 'ws-'));
  const outside = mkdtempSync(join(tmpdir(), 'out-'));
  writeFileSync(join(outside, 'secret'), 'secret');
  mkdirSync(join(outside, 'dir'));
  writeFileSync(join(outside, 'dir', 'kept'), 'kept');
  mkdirSync(join(root, 'dir', 'sub'), { recursive: true });
  writeFileSync(join(root, 'dir', 'a.txt'), 'abc');
  writeFileSync(join(root, 'file.txt'), 'hello');
  chmodSync(join(root, 'file.txt'), 0o640);
  symlinkSync(join(root, 'dir'), join(root, 'alias'));
  symlinkSync(outside, join(root, 'escape'));
  symlinkSync(join(outside, 'secret'), join(root, 'secret-link'));
  return { root, outside };
}

describe('entryPath', () => {
  const { root } = workspace();

  it('resolves the directories on the way but not the last name', async () => {
    await expect(entryPath('alias/a.txt', root)).resolves.toBe(join(root, 'dir', 'a.txt'));
    await expect(entryPath('secret-link', root)).resolves.toBe(join(root, 'secret-link'));
  });

  it('refuses directories on the way that lead out, and paths that leave', async () => {
    for (const path of ['escape/secret', 'escape/missing', '../x', '/etc/passwd', 'a/../../x']) {
      await expect(entryPath(path, root)).rejects.toMatchObject({ code: 'invalid_path' });
    }
  });

  it('names a missing directory on the way as the path not found', async () => {
    await expect(entryPath('none/x', root)).rejects.toMatchObject({
      code: 'file_not_found',
      details: { path: 'none/x' },
    });
  });
});

describe('statEntry', () => {
  const { root } = workspace();

  it('describes files, directories and the workspace itself', async () => {
    const file = await statEntry('./dir/../file.txt', root);
    expect(file).toMatchObject({ path: 'file.txt', type: 'file', size: 5, mode: 0o640 });
    expect(Date.parse(file.modified)).toBeGreaterThan(Date.now() - 60_000);
    await expect(statEntry('alias/sub', root)).resolves.toMatchObject({
      path: 'alias/sub',
      type: 'directory',
    });
    await expect(statEntry('', root)).resolves.toMatchObject({ path: '', type: 'directory' });
  });

  it('describes a symlink itself, even one pointing out, never its target', async () => {
    const link = await statEntry('secret-link', root);
    expect(link.type).toBe('symlink');
    expect(link.size).toBe(readlinkSync(join(root, 'secret-link')).length);
  });

  it('answers file_not_found for a missing entry, invalid_path through a link out', async () => {
    await expect(statEntry('missing', root)).rejects.toMatchObject({ code: 'file_not_found' });
    for (const path of ['file.txt/x', 'file.txt/x/y']) {
      await expect(statEntry(path, root)).rejects.toMatchObject({ code: 'file_not_found' });
    }
    await expect(statEntry('escape/secret', root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
  });
});

describe('removeEntry', () => {
  it('removes files and empty directories; a non-empty one only when recursive', async () => {
    const { root } = workspace();
    await expect(removeEntry('file.txt', false, root)).resolves.toEqual({ path: 'file.txt' });
    expect(existsSync(join(root, 'file.txt'))).toBe(false);
    await expect(removeEntry('dir', false, root)).rejects.toMatchObject({
      code: 'directory_not_empty',
      details: { path: 'dir' },
    });
    await expect(removeEntry('dir/sub', false, root)).resolves.toEqual({ path: 'dir/sub' });
    await expect(removeEntry('dir/', true, root)).resolves.toEqual({ path: 'dir' });
    expect(existsSync(join(root, 'dir'))).toBe(false);
    await expect(removeEntry('dir', true, root)).rejects.toMatchObject({
      code: 'file_not_found',
    });
  });

  it('removes a link, never what it points to, and never through a link out', async () => {
    const { root, outside } = workspace();
    await expect(removeEntry('escape', true, root)).resolves.toEqual({ path: 'escape' });
    await expect(removeEntry('secret-link', false, root)).resolves.toEqual({
      path: 'secret-link',
    });
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('secret');
    expect(existsSync(join(outside, 'dir', 'kept'))).toBe(true);
    const again = workspace();
    await expect(removeEntry('escape/dir', true, again.root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    expect(existsSync(join(again.outside, 'dir', 'kept'))).toBe(true);
  });

  it('a recursive removal leaves what links inside the tree point to', async () => {
    const { root, outside } = workspace();
    symlinkSync(outside, join(root, 'dir', 'out'));
    await removeEntry('dir', true, root);
    expect(existsSync(join(outside, 'dir', 'kept'))).toBe(true);
  });

  it('refuses the workspace itself, however it is named', async () => {
    const { root } = workspace();
    for (const path of ['', '.', 'dir/..', './']) {
      await expect(removeEntry(path, true, root)).rejects.toMatchObject({
        code: 'invalid_path',
      });
    }
    expect(existsSync(join(root, 'file.txt'))).toBe(true);
  });
});

describe('renameEntry', () => {
  it('moves a file, making the destination parents', async () => {
    const { root } = workspace();
    await expect(renameEntry('file.txt', 'new/deep/f.txt', false, root)).resolves.toEqual({
      from: 'file.txt',
      to: 'new/deep/f.txt',
    });
    expect(readFileSync(join(root, 'new', 'deep', 'f.txt'), 'utf8')).toBe('hello');
    expect(existsSync(join(root, 'file.txt'))).toBe(false);
  });

  it('refuses an existing destination unless overwrite', async () => {
    const { root } = workspace();
    await expect(renameEntry('file.txt', 'dir/a.txt', false, root)).rejects.toMatchObject({
      code: 'file_exists',
      details: { path: 'dir/a.txt' },
    });
    expect(readFileSync(join(root, 'dir', 'a.txt'), 'utf8')).toBe('abc');
    await renameEntry('file.txt', 'dir/a.txt', true, root);
    expect(readFileSync(join(root, 'dir', 'a.txt'), 'utf8')).toBe('hello');
  });

  it('tells a non-empty directory destination and a move into itself', async () => {
    const { root } = workspace();
    mkdirSync(join(root, 'other'));
    writeFileSync(join(root, 'other', 'x'), 'x');
    await expect(renameEntry('dir', 'other', true, root)).rejects.toMatchObject({
      code: 'directory_not_empty',
    });
    await expect(renameEntry('dir', 'dir/sub/inner', false, root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    expect(existsSync(join(root, 'dir', 'sub', 'inner'))).toBe(false);
    await expect(renameEntry('missing', 'x', false, root)).rejects.toMatchObject({
      code: 'file_not_found',
      details: { path: 'missing' },
    });
  });

  it('moves a link itself, and never in or out through a link that leaves', async () => {
    const { root, outside } = workspace();
    await renameEntry('secret-link', 'moved-link', false, root);
    expect(lstatSync(join(root, 'moved-link')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(outside, 'secret'))).toBe(true);
    await expect(renameEntry('file.txt', 'escape/stolen', false, root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    await expect(renameEntry('escape/secret', 'mine', false, root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    await expect(renameEntry('file.txt', '../out.txt', false, root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    expect(existsSync(join(outside, 'stolen'))).toBe(false);
    expect(existsSync(join(root, 'file.txt'))).toBe(true);
  });

  it('refuses the workspace itself as either end', async () => {
    const { root } = workspace();
    await expect(renameEntry('.', 'x', false, root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    await expect(renameEntry('file.txt', '', true, root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
  });
});

describe('makeDirectory', () => {
  it('makes parents, and is idempotent', async () => {
    const { root } = workspace();
    await expect(makeDirectory('a/b/c', root)).resolves.toEqual({ path: 'a/b/c', created: true });
    expect(lstatSync(join(root, 'a', 'b', 'c')).isDirectory()).toBe(true);
    await expect(makeDirectory('a/b/c/', root)).resolves.toEqual({
      path: 'a/b/c',
      created: false,
    });
    await expect(makeDirectory('alias/sub', root)).resolves.toEqual({
      path: 'alias/sub',
      created: false,
    });
  });

  it('refuses a file in the way and a link that leads out', async () => {
    const { root, outside } = workspace();
    await expect(makeDirectory('file.txt', root)).rejects.toMatchObject({ code: 'invalid_path' });
    await expect(makeDirectory('file.txt/x', root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    await expect(makeDirectory('escape/made', root)).rejects.toMatchObject({
      code: 'invalid_path',
    });
    expect(existsSync(join(outside, 'made'))).toBe(false);
  });
});
