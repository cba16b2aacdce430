import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitGone } from './processes';

/** A /proc of our own: `pid`'s stat says `state` (R running, Z exited), or it is gone. */
function fakeProc() {
  const root = mkdtempSync(join(tmpdir(), 'proc-'));
  const stat = (pid: number, state: string) =>
    `${pid} (sleep) ${state} 1 ${pid} ${pid} 0 -1 0 0 0 0 0 0 0 0 20 0 1 0 1 1000 100`;
  return {
    root,
    set(pid: number, state: string | undefined) {
      if (state === undefined) {
        rmSync(join(root, String(pid)), { recursive: true, force: true });
        return;
      }
      mkdirSync(join(root, String(pid)), { recursive: true });
      writeFileSync(join(root, String(pid), 'stat'), stat(pid, state));
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

describe('waitGone', () => {
  it('waits while a killed process still runs, and ends once it exited or was reaped', async () => {
    const proc = fakeProc();
    try {
      proc.set(11, 'R');
      proc.set(12, 'R');
      let done = false;
      const waiting = waitGone([11, 12], 5000, proc.root).then(() => (done = true));
      await new Promise((resolve) => setTimeout(resolve, 40));
      expect(done).toBe(false);
      proc.set(11, 'Z'); // exited, not yet reaped
      await new Promise((resolve) => setTimeout(resolve, 40));
      expect(done).toBe(false);
      proc.set(12, undefined); // reaped
      await waiting;
      expect(done).toBe(true);
    } finally {
      proc.remove();
    }
  });

  it('gives up after its time, for a process that never ends', async () => {
    const proc = fakeProc();
    try {
      proc.set(13, 'R');
      const started = Date.now();
      await waitGone([13], 60, proc.root);
      expect(Date.now() - started).toBeGreaterThanOrEqual(60);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      proc.remove();
    }
  });
});
