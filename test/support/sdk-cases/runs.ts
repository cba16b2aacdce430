import {
  AbortedError,
  ExecutionTimeoutError,
  InvalidRequestError,
  ProcessNotFoundError,
  type ExecutionEvent,
  type Sandbox,
} from '@sandbox/sdk';
import { sleep, exists, type SdkContext } from './context';

/** Streamed events come in order, `started` first; the callbacks see the output. */
async function streamsInOrder(sandbox: Sandbox): Promise<void> {
  const events: ExecutionEvent[] = [];
  for await (const event of sandbox.stream({ command: 'echo out; echo err >&2; exit 2' })) {
    events.push(event);
  }
  // `started` first for every run (not only one with stdin), naming its pid and process id.
  expect(events[0]).toEqual({
    type: 'started',
    pid: expect.any(Number),
    processId: expect.stringMatching(/^proc_[a-f0-9]{16}$/),
  });
  expect(events.map((e) => e.type).sort()).toEqual([
    'exit',
    'result',
    'started',
    'stderr',
    'stdout',
  ]);
  expect(events.slice(-2)).toEqual([
    { type: 'exit', code: 2 },
    { type: 'result', result: expect.objectContaining({ exitCode: 2, stdout: 'out\n' }) },
  ]);
  const seen: string[] = [];
  const result = await sandbox.run('console.log("a"); console.error("b")', {
    onStdout: (data) => seen.push(`out:${data}`),
    onStderr: (data) => seen.push(`err:${data}`),
  });
  expect(seen.sort()).toEqual(['err:b\n', 'out:a\n']);
  expect(result.stdout).toBe('a\n');
}

/** Runs in one sandbox: plain, streamed, left early, aborted, timed out, killed. */
function runs({ useSandbox }: SdkContext): void {
  describe('runs', () => {
    const box = useSandbox();

    it('runs TypeScript and commands with env, files and a working directory', async () => {
      const code = await box.sandbox.run(
        'const n: number = 6 * 7; console.log(n, process.env.WHO)',
        {
          env: { WHO: 'sdk' },
        },
      );
      expect(code).toMatchObject({ stdout: '42 sdk\n', exitCode: 0, timedOut: false });
      const command = await box.sandbox.exec('pwd; cat in.txt; exit 3', {
        workingDir: 'sub',
        files: [{ path: 'sub/in.txt', content: 'given' }],
      });
      expect(command).toMatchObject({ stdout: '/workspace/sub\ngiven', exitCode: 3 });
    });

    it('streams events in order, and feeds callbacks', () => streamsInOrder(box.sandbox));

    it('leaves the run going when the loop leaves early, and kills it when the signal aborts', async () => {
      for await (const event of box.sandbox.stream({
        command: 'echo go; sleep 2; touch left.txt',
      })) {
        if (event.type === 'stdout') break;
      }
      const controller = new AbortController();
      const cancelled = box.sandbox.exec('sleep 2; touch aborted.txt', {
        signal: controller.signal,
      });
      setTimeout(() => controller.abort(), 300);
      await expect(cancelled).rejects.toBeInstanceOf(AbortedError);
      await sleep(3000);
      // Leaving the loop only closed the connection: the run outlived it (issue 42).
      expect(await exists(box.sandbox, 'left.txt')).toBe(true);
      expect(await exists(box.sandbox, 'aborted.txt')).toBe(false);
    });

    it('throws ExecutionTimeoutError with the partial output, streamed or not', async () => {
      const plain = await box.sandbox
        .exec('echo started; sleep 5', { timeout: 1 })
        .catch((e: unknown) => e);
      expect(plain).toBeInstanceOf(ExecutionTimeoutError);
      expect(plain).toMatchObject({ status: 408, stdout: 'started\n' });
      const streamed = await box.sandbox
        .exec('echo started; sleep 5', { timeout: 1, onStdout: () => undefined })
        .catch((e: unknown) => e);
      expect(streamed).toBeInstanceOf(ExecutionTimeoutError);
      expect(streamed).toMatchObject({ stdout: 'started\n' });
    });

    it('kills every process only when asked to by killAll, and names an unknown pid', async () => {
      await box.sandbox.exec('nohup sleep 100 >/dev/null 2>&1 &');
      // A missing pid no longer means "everything" (issue 42).
      const kill = box.sandbox.processes.kill.bind(box.sandbox.processes) as (
        pid?: number,
      ) => unknown;
      await expect(kill(undefined)).rejects.toBeInstanceOf(InvalidRequestError);
      expect((await box.sandbox.exec("pgrep -f 'sleep 100' >/dev/null && echo alive")).stdout).toBe(
        'alive\n',
      );
      const killed = await box.sandbox.processes.killAll();
      expect(killed.killed).toBeGreaterThanOrEqual(1);
      await expect(box.sandbox.processes.kill(999_999)).rejects.toBeInstanceOf(
        ProcessNotFoundError,
      );
    });
  });
}

/** Runs started in the background and followed by their handle. */
function backgroundRuns({ useSandbox }: SdkContext): void {
  describe('runs in the background (issue 42)', () => {
    const box = useSandbox();

    it('gives a handle at once, and its result when it ends', async () => {
      const handle = await box.sandbox.exec('echo one; sleep 1; echo two >&2; exit 3', {
        background: true,
      });
      expect(handle.pid).toEqual(expect.any(Number));
      expect(handle.id).toMatch(/^proc_[a-f0-9]{16}$/);
      expect(await handle.info()).toMatchObject({
        id: handle.id,
        pid: handle.pid,
        state: 'running',
      });
      const result = await handle.wait();
      expect(result).toMatchObject({ stdout: 'one\n', stderr: 'two\n', exitCode: 3 });
      expect(await handle.wait()).toMatchObject({ exitCode: 3 }); // again, once it has ended
      // A run that says nothing and ends at once has a handle too (its started event).
      const silent = await box.sandbox.exec('true', { background: true });
      expect((await silent.wait()).exitCode).toBe(0);
    });

    it('keeps running without its client, and its output can be followed and read', async () => {
      const handle = await box.sandbox.exec(
        'for i in 1 2 3; do echo $i; sleep 0.5; done; touch background-done.txt',
        { background: true },
      );
      // Leaving a follow loop ends the read only.
      for await (const event of handle.follow()) {
        if (event.type === 'stdout') break;
      }
      const followed: string[] = [];
      for await (const event of handle.follow()) {
        if (event.type === 'stdout') followed.push(event.data);
        if (event.type === 'end') followed.push(`end:${String(event.process.exitCode)}`);
      }
      expect(followed.join('')).toBe('1\n2\n3\nend:0');
      expect(await exists(box.sandbox, 'background-done.txt')).toBe(true);
      expect((await handle.output()).stdout).toBe('1\n2\n3\n');
    });

    it('feeds output callbacks, writes stdin, and connects by pid', async () => {
      const seen: string[] = [];
      const handle = await box.sandbox.run(
        'process.stdin.on("data", (d) => console.log("got " + String(d).trim()));',
        { background: true, stdin: true, onStdout: (data) => seen.push(data) },
      );
      await handle.writeStdin('a\n');
      const again = await box.sandbox.processes.connect(handle.pid);
      expect(again.id).toBe(handle.id);
      await again.closeStdin();
      expect((await handle.wait()).stdout).toBe('got a\n');
      expect(seen.join('')).toBe('got a\n');
    });

    it("kills its run by the handle or by the run's proc_ id, and killAll kills them all", async () => {
      const one = await box.sandbox.exec('sleep 30', { background: true });
      expect((await one.kill()).killed).toBeGreaterThanOrEqual(1);
      expect((await one.wait()).exitCode).not.toBe(0);
      expect(await one.kill()).toEqual({ killed: 0, pids: [] }); // ended: nothing killed
      const two = await box.sandbox.exec('sleep 30', { background: true });
      expect((await box.sandbox.processes.kill(two.id)).pids).toContain(two.pid);
      expect((await two.wait()).exitCode).not.toBe(0);
      const many = await Promise.all(
        [1, 2].map(() => box.sandbox.exec('sleep 30', { background: true })),
      );
      expect((await box.sandbox.processes.killAll()).killed).toBeGreaterThanOrEqual(2);
      for (const handle of many) expect((await handle.wait()).exitCode).not.toBe(0);
    });
  });
}

/** Runs through the SDK: plain, streamed, cancelled, timed out, killed, in the background. */
export const runCases: ((t: SdkContext) => void)[] = [runs, backgroundRuns];
