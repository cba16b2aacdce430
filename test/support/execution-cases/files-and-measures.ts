import { createAccount } from '../api';
import type { AccountFixture } from '../use-stack';
import { executeIn } from './context';

/** Asks for a run with `files`, which must be refused whole: 400 invalid_path (with `details`). */
async function expectFilesRefused(
  t: AccountFixture,
  files: { path: string; content: string }[],
  details?: Record<string, unknown>,
): Promise<void> {
  const run = await executeIn(t)({ files, command: 'true' });
  expect(run.status).toBe(400);
  expect(run.body).toMatchObject({
    error: { code: 'invalid_path', ...(details ? { details } : {}) },
  });
}

/** Files written before a run: all or none, modes kept, the plan limit. */
function filesInExecute(t: AccountFixture): void {
  const execute = executeIn(t);
  describe('files in execute', () => {
    it('writes binary and text files before the run and lists what the run wrote', async () => {
      const bytes = Buffer.from([0, 1, 2, 250, 251, 252]);
      const run = await execute({
        files: [
          { path: 'in/a.bin', content: bytes.toString('base64'), encoding: 'base64' },
          { path: 'in/b.txt', content: 'héllo' },
        ],
        command:
          'od -An -tu1 in/a.bin | tr -s " "; cat in/b.txt; echo; echo out > made.txt; mkdir -p d && echo x > d/y.txt',
      });
      expect(run.body.stdout).toBe(' 0 1 2 250 251 252\nhéllo\n');
      expect(run.body.filesWritten).toEqual(['in/a.bin', 'in/b.txt', 'd/y.txt', 'made.txt']);
    });

    it('writes all files or none', async () => {
      await expectFilesRefused(
        t,
        [
          { path: 'atomic/one.txt', content: '1' },
          { path: '../escape.txt', content: '2' },
        ],
        { path: '../escape.txt' },
      );
      const check = await execute({
        command: 'ls atomic 2>&1 || true; ls -a /workspace | grep -c tmp || true',
      });
      expect(check.body.stdout).toContain('No such file');
    });

    it('leaves no directory behind when a later file is refused in the sandbox', async () => {
      await execute({ command: 'ln -sfn /etc leads-out' });
      await expectFilesRefused(t, [
        { path: 'made/for/one.txt', content: '1' },
        { path: 'leads-out/x.txt', content: '2' },
      ]);
      await expectFilesRefused(
        t,
        [
          { path: 'nest', content: 'a file' },
          { path: 'nest/inner.txt', content: 'and a directory' },
        ],
        { path: 'nest' },
      );
      const check = await execute({ command: 'ls -d made nest 2>&1 | grep -c "No such" ' });
      expect(check.body.stdout).toBe('2\n');
    });

    it('keeps the mode of a file it replaces', async () => {
      await execute({ command: "printf '#!/bin/sh\\necho old\\n' > tool.sh && chmod 755 tool.sh" });
      const run = await execute({
        files: [{ path: 'tool.sh', content: '#!/bin/sh\necho new\n' }],
        command: './tool.sh',
      });
      expect(run.body).toMatchObject({ stdout: 'new\n', exitCode: 0 });
    });

    it('refuses a file over the plan limit with 413 file_too_large', async () => {
      const free = t.as((await createAccount(t.stack, 'free')).key);
      const big = 'a'.repeat(10 * 1024 * 1024 + 1);
      const run = await free.execute(await free.createSession(), {
        command: 'true',
        files: [{ path: 'big.txt', content: big }],
      });
      expect(run.status).toBe(413);
      expect(run.body).toMatchObject({
        error: { code: 'file_too_large', details: { path: 'big.txt', size: 10 * 1024 * 1024 + 1 } },
      });
    });
  });
}

/** Peak memory and CPU time, children included. */
function measurement(t: AccountFixture): void {
  const execute = executeIn(t);
  describe('measurement', () => {
    it('reports the peak memory of a run that touches 150 MB, and its CPU time', async () => {
      const run = await execute({
        code: 'const b = Buffer.alloc(150 * 1024 * 1024, 1);\nlet s = 0; for (let i = 0; i < b.length; i += 4096) s += b[i];\nconsole.log(s > 0);',
      });
      expect(run.body.stdout).toBe('true\n');
      expect(run.body.memoryUsed).toBeGreaterThanOrEqual(150 * 1024 * 1024);
      expect(run.body.cpuTime).toBeGreaterThan(0);
    });

    it('counts CPU time of busy child processes', async () => {
      const fast = await t.api.createSession({ resourceLimits: { cpu: 2 } });
      // Each child spins, then prints the CPU time it used itself (utime + stime, in ticks of
      // 10 ms), so that the comparison holds however loaded the machine is.
      const child =
        'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; ' +
        'read -r -a s </proc/$BASHPID/stat; echo $(( (s[13] + s[14]) * 10 ))';
      const run = await execute({ command: `(${child}) & (${child}) & wait` }, fast);
      const own = (run.body.stdout as string).trim().split('\n').map(Number);
      expect(own).toHaveLength(2);
      const children = (own[0] ?? 0) + (own[1] ?? 0);
      expect(children).toBeGreaterThan(100);
      // Uncounted children would leave the parent's wait at nearly nothing.
      expect(run.body.cpuTime).toBeGreaterThanOrEqual(children * 0.9);
    });
  });
}

/** A run's files, and what it measures (memory, CPU time). */
export const fileAndMeasureCases: ((t: AccountFixture) => void)[] = [filesInExecute, measurement];
