import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listProcessTree } from './process-tree';

function fakeProc(tree: Record<number, number[]>): string {
  const root = mkdtempSync(join(tmpdir(), 'proc-'));
  for (const [pid, children] of Object.entries(tree)) {
    mkdirSync(join(root, pid, 'task', pid), { recursive: true });
    writeFileSync(join(root, pid, 'task', pid, 'children'), children.join(' ') + ' ');
  }
  return root;
}

describe('listProcessTree', () => {
  it('walks every descendant, parents first', async () => {
    const root = fakeProc({ 10: [11, 12], 11: [13], 12: [], 13: [] });
    expect(await listProcessTree(10, root)).toEqual([10, 11, 12, 13]);
  });

  it('tolerates processes that vanished', async () => {
    const root = fakeProc({ 10: [99] });
    expect(await listProcessTree(10, root)).toEqual([10, 99]);
  });
});
