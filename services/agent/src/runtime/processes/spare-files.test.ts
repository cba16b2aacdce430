import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirPerTest } from './process-log-fixtures';
import { SpareFiles } from './spare-files';

const root = tempDirPerTest('spare-files-');

describe('SpareFiles', () => {
  it('keeps files given up to its bound, and hands each out once', () => {
    const spares = new SpareFiles(join(root(), 'spare'), 2);
    const made = ['a', 'b', 'c'].map((name) => {
      const path = join(root(), name);
      writeFileSync(path, '');
      return { path, inode: statSync(path).ino };
    });
    for (const { path } of made) spares.give(path);
    expect(spares.count).toBe(2);
    expect(readdirSync(root()).sort()).toEqual(['spare']); // the third was removed
    const taken = [spares.take(), spares.take()];
    expect(spares.take()).toBeUndefined();
    const inodes = taken.map((path) => statSync(path ?? '').ino).sort();
    expect(inodes).toEqual([made[0]?.inode, made[1]?.inode].sort());
  });

  it('takes at start only the empty regular files it named, and names new ones past them', () => {
    const dir = join(root(), 'spare');
    mkdirSync(dir);
    writeFileSync(join(dir, 'spare-7'), '');
    writeFileSync(join(dir, 'spare-8'), 'left over: not empty');
    writeFileSync(join(dir, 'other'), '');
    mkdirSync(join(dir, 'spare-9'));
    writeFileSync(join(root(), 'target'), 'secret');
    symlinkSync(join(root(), 'target'), join(dir, 'spare-10'));
    const spares = new SpareFiles(dir);
    expect(readdirSync(dir)).toEqual(['spare-7']);
    expect(spares.count).toBe(1);
    const given = join(root(), 'given');
    writeFileSync(given, '');
    spares.give(given);
    expect(readdirSync(dir).sort()).toEqual(['spare-7', 'spare-8']);
    expect(statSync(join(root(), 'target')).size).toBe(6); // a link's target is never touched
  });
});

describe('SpareFiles.giveFull', () => {
  it('takes a full file out of its place at once, and hands it out only once emptied', async () => {
    const spares = new SpareFiles(join(root(), 'spare'));
    const path = join(root(), 'full');
    writeFileSync(path, 'secret output');
    const inode = statSync(path).ino;
    const giving = spares.giveFull(path);
    expect(readdirSync(root()).sort()).toEqual(['spare']); // moved out before any await
    expect(spares.take()).toBeUndefined(); // not a spare while it holds bytes
    await giving;
    const taken = spares.take() ?? '';
    expect(statSync(taken).ino).toBe(inode);
    expect(statSync(taken).size).toBe(0);
  });

  it('never empties through a link: the link goes, its target keeps its bytes', async () => {
    const spares = new SpareFiles(join(root(), 'spare'));
    const target = join(root(), 'target');
    writeFileSync(target, 'secret output');
    const link = join(root(), 'link');
    symlinkSync(target, link);
    await spares.giveFull(link);
    expect(spares.count).toBe(0);
    expect(readdirSync(join(root(), 'spare'))).toEqual([]);
    expect(readFileSync(target, 'utf8')).toBe('secret output');
  });

  it('removes at start a file a crash left half given', () => {
    const dir = join(root(), 'spare');
    mkdirSync(dir);
    writeFileSync(join(dir, 'emptying-3'), 'secret output');
    const spares = new SpareFiles(dir);
    expect(readdirSync(dir)).toEqual([]);
    expect(spares.count).toBe(0);
  });

  it('keeps at start a file emptied here, and names new ones past it', () => {
    const dir = join(root(), 'spare');
    mkdirSync(dir);
    writeFileSync(join(dir, 'emptying-12'), '');
    const spares = new SpareFiles(dir);
    expect(spares.count).toBe(1);
    const given = join(root(), 'given');
    writeFileSync(given, '');
    spares.give(given);
    expect(readdirSync(dir).sort()).toEqual(['emptying-12', 'spare-13']);
  });
});
