import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUNNER_FRONT_PATH } from '@sandbox/contract/run';
import { frontParent } from './front-parent';

describe('frontParent', () => {
  const procWith = (cmdlines: Record<number, string>) => {
    const root = mkdtempSync(join(tmpdir(), 'proc-'));
    for (const [pid, cmdline] of Object.entries(cmdlines)) {
      mkdirSync(join(root, pid));
      writeFileSync(join(root, pid, 'cmdline'), cmdline);
    }
    return root;
  };

  it("is the parent when the parent is the runner's front", () => {
    const proc = procWith({ 7: `${RUNNER_FRONT_PATH}\0`, 8: 'sh\0-c\0x\0' });
    expect(frontParent(7, proc)).toBe(7);
    expect(frontParent(8, proc)).toBeUndefined();
  });

  it('is undefined for a parent named like the front with more arguments, or gone', () => {
    const proc = procWith({ 9: `${RUNNER_FRONT_PATH}\0--other\0` });
    expect(frontParent(9, proc)).toBeUndefined();
    expect(frontParent(10, proc)).toBeUndefined();
  });
});
