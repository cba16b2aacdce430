import {
  ClientTimeoutError,
  RateLimitedError,
  Sandbox,
  ServiceUnavailableError,
} from '@sandbox/sdk';
import { cuttingProxy, scriptedProxy, silentServer } from '../gateway-proxies';
import type { SdkContext } from './context';

/** A stream cut by a proxy resumes where it stopped; stdin and output through the SDK. */
function outlivingRuns({ t, client, useSandbox }: SdkContext): void {
  describe('runs that outlive their connection', () => {
    const box = useSandbox();

    it('resumes a stream cut mid-run: every byte once, and the result', async () => {
      const { sandbox } = box;
      const command = 'for i in $(seq 1 30); do echo "line $i"; sleep 0.03; done; exit 4';
      const whole = await sandbox.exec(command);
      const proxy = await cuttingProxy(t.stack.url, 600);
      try {
        const remote = await Sandbox.connect(sandbox.id, client(proxy.url));
        let stdout = '';
        let result: unknown;
        for await (const event of remote.stream({ command })) {
          if (event.type === 'stdout') stdout += event.data;
          if (event.type === 'result') result = event.result;
        }
        expect(stdout).toBe(whole.stdout);
        expect(result).toMatchObject({ stdout: whole.stdout, exitCode: 4 });
        expect(proxy.seen.filter((r) => r.includes('/execute') && /proc_/.test(r))).toHaveLength(1);
      } finally {
        await proxy.close();
      }
    });

    it('writes stdin, lists runs, reads and follows their output', async () => {
      const { sandbox } = box;
      const seen: string[] = [];
      let pid = 0;
      for await (const event of sandbox.stream(
        { command: 'read a; echo "hi $a"; cat' },
        { stdin: true },
      )) {
        if (event.type === 'started') {
          pid = event.pid;
          await sandbox.processes.writeStdin(pid, 'sdk\n');
          await sandbox.processes.writeStdin(pid, new TextEncoder().encode('bytes'), {
            close: true,
          });
        }
        if (event.type === 'stdout') seen.push(event.data);
      }
      expect(seen.join('')).toBe('hi sdk\nbytes');
      const listed = (await sandbox.processes.list()).find((run) => run.pid === pid);
      expect(listed).toMatchObject({ pid, state: 'exited', exitCode: 0, stdinBytes: 9 });
      expect((await sandbox.processes.output(pid)).stdout).toBe('hi sdk\nbytes');
      const followed: string[] = [];
      for await (const event of sandbox.processes.follow(listed?.id ?? '')) {
        followed.push(event.type === 'end' ? `end:${event.process.exitCode}` : event.type);
      }
      expect(followed.at(-1)).toBe('end:0');
    });
  });
}

/** requestTimeoutMs gives up a silent server, and a stalled stream resumes. */
function stalledRequests({ t, client }: SdkContext): void {
  describe('stalled requests', () => {
    it('gives up a stalled request after requestTimeoutMs, and resumes a stalled stream', async () => {
      const silent = await silentServer();
      try {
        const started = Date.now();
        const stalled = await Sandbox.connect('ses_whatever', {
          ...client(silent.url),
          requestTimeoutMs: 500,
          maxRetries: 0,
        }).catch((e: unknown) => e);
        expect(stalled).toBeInstanceOf(ClientTimeoutError);
        expect(Date.now() - started).toBeLessThan(3000);
      } finally {
        await silent.close();
      }
      const sandbox = await Sandbox.create(client());
      const command = 'for i in $(seq 1 20); do echo "line $i"; sleep 0.1; done';
      const proxy = await cuttingProxy(t.stack.url, 400, 'stall');
      try {
        const remote = await Sandbox.connect(sandbox.id, {
          ...client(proxy.url),
          requestTimeoutMs: 1000,
        });
        let stdout = '';
        for await (const event of remote.stream({ command })) {
          if (event.type === 'stdout') stdout += event.data;
        }
        expect(stdout).toBe(Array.from({ length: 20 }, (_, i) => `line ${i + 1}\n`).join(''));
        expect(proxy.seen.filter((r) => r.includes('/execute') && /proc_/.test(r))).toHaveLength(1);
      } finally {
        await proxy.close();
        await sandbox.delete();
      }
    });
  });
}

/** 503 and 429 retried as asked; a run answered 503 never sent twice. */
function retries({ t, client }: SdkContext): void {
  describe('retries', () => {
    it('retries 503 and 429 as asked, and a create whose answer was lost makes one session', async () => {
      const proxy = await scriptedProxy(t.stack.url, [
        { path: '/sessions/create', answer: 'lose' },
        { path: '/sessions/create', answer: 503, retryAfter: '0' },
        { path: '/sessions?', answer: 429, retryAfter: '1' },
      ]);
      try {
        const before = (await Sandbox.list({ ...client(), limit: 100 })).pagination.total;
        const sandbox = await Sandbox.create(client(proxy.url));
        // Forwarded twice (the lost answer, then the retry), one session: the Idempotency-Key.
        expect(proxy.forwarded.filter((r) => r.includes('/sessions/create'))).toHaveLength(2);
        expect((await Sandbox.list({ ...client(), limit: 100 })).pagination.total).toBe(before + 1);

        const started = Date.now();
        const page = await Sandbox.list({ ...client(proxy.url), limit: 100 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // Retry-After: 1 honoured
        expect(page.data.map((s) => s.sessionId)).toContain(sandbox.id);
        await sandbox.delete();
      } finally {
        await proxy.close();
      }
    });

    it('never runs code twice: a run answered 503 is not sent again; gives up on 429 when told', async () => {
      const proxy = await scriptedProxy(t.stack.url, [
        { path: '/execute', answer: 503, retryAfter: '0' },
      ]);
      const sandbox = await Sandbox.create(client());
      try {
        const remote = await Sandbox.connect(sandbox.id, client(proxy.url));
        await expect(remote.exec('echo once >> runs.txt')).rejects.toBeInstanceOf(
          ServiceUnavailableError,
        );
        expect(proxy.forwarded.filter((r) => r.includes('/execute'))).toHaveLength(0);
        const limited = await scriptedProxy(t.stack.url, [
          { path: '/sessions?', answer: 429, retryAfter: '120' },
        ]);
        try {
          const refused = await Sandbox.list({
            ...client(limited.url),
            limit: 10,
            maxRetryDelayMs: 5000,
          }).catch((e: unknown) => e);
          expect(refused).toBeInstanceOf(RateLimitedError);
          expect(refused).toMatchObject({ retryAfter: 120 });
        } finally {
          await limited.close();
        }
      } finally {
        await sandbox.delete();
        await proxy.close();
      }
    });
  });
}

/** Runs that outlive their connection, stalled requests, and retries (through proxies). */
export const connectionCases: ((t: SdkContext) => void)[] = [
  outlivingRuns,
  stalledRequests,
  retries,
];
