import type { AccountFixture } from '../use-stack';
import { executeIn } from './context';

/** Background processes, kills of one, all and whole trees. */
function processes(t: AccountFixture): void {
  const execute = executeIn(t);
  describe('processes', () => {
    it('keeps a background server alive for later runs, and returns at once', async () => {
      const started = Date.now();
      const run = await execute({
        command:
          "node -e \"require('http').createServer((q, s) => s.end('pong')).listen(8000)\" & sleep 0.5; echo started",
      });
      expect(run.body.stdout).toBe('started\n');
      expect(Date.now() - started).toBeLessThan(3000);
      const later = await execute({
        command: 'for i in $(seq 100); do curl -s localhost:8000 && break; sleep 0.1; done',
      });
      expect(later.body.stdout).toBe('pong');
    });

    it('kills one process, then all, with the kill result of 2.10', async () => {
      const id = await t.api.createSession();
      const started = await execute(
        {
          command:
            'nohup sleep 300 >/dev/null 2>&1 & echo $!; nohup sleep 301 >/dev/null 2>&1 & echo $!',
        },
        id,
      );
      const [first, second] = (started.body.stdout as string).trim().split('\n').map(Number);
      const kill = (pid?: number) => t.api.kill(id, pid);
      const one = await kill(first);
      expect(one.status).toBe(200);
      expect(one.body).toEqual({ killed: 1, pids: [first] });
      const info = await t.api.session(id);
      expect(info.body.activeProcesses).toBe(1);
      const all = await kill();
      expect(all.body).toEqual({ killed: 1, pids: [second] });
      const missing = await kill(99_999);
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ error: { code: 'process_not_found' } });
      // The shells armed for the next runs (ADR 48) were neither counted nor killed above; the
      // user's own kill of everything takes them too, and the next runs still run.
      expect((await execute({ command: 'kill -9 -1' }, id)).body).toMatchObject({ exitCode: 0 });
      for (const word of ['once', 'twice']) {
        const next = await execute({ command: `echo ${word}` }, id);
        expect(next.body).toMatchObject({ stdout: `${word}\n`, exitCode: 0 });
      }
    });

    it('kills a process with its children, even those in a session of their own', async () => {
      const started = await execute({
        command:
          "nohup bash -c 'setsid sleep 1101 & sleep 1102 & wait' >/dev/null 2>&1 & echo $!; sleep 0.3",
      });
      const parent = Number((started.body.stdout as string).trim());
      const kill = await t.api.kill(t.sessionId, parent);
      expect(kill.status).toBe(200);
      expect(kill.body.killed).toBe(3);
      expect(kill.body.pids).toContain(parent);
      const check = await execute({ command: "pgrep -f 'sleep 110[12]' || echo gone" });
      expect(check.body.stdout).toBe('gone\n');
    });

    it('kills the whole tree of a timed-out run, even children in a session of their own', async () => {
      const run = await execute({
        command:
          'setsid sleep 1201 & setsid bash -c "sleep 1202" & ' +
          // A detached child whose parent is gone: no longer in the tree at all.
          "node -e \"require('child_process').spawn('sleep', ['1203'], { detached: true, stdio: 'ignore' }).unref()\"; " +
          'echo partial; sleep 60',
        timeout: 2,
      });
      expect(run.status).toBe(408);
      expect(run.body).toMatchObject({
        error: { code: 'execution_timeout', stdout: 'partial\n', details: { timeout: 2 } },
      });
      const check = await execute({ command: "pgrep -f 'sleep 120[123]' || echo gone" });
      expect(check.body.stdout).toBe('gone\n');
    });
  });
}

/** Impossible pids, NUL bytes, and a run whose client went away. */
function processRefusals(t: AccountFixture): void {
  const execute = executeIn(t);
  describe('processes: refusals and lost clients', () => {
    it('refuses a pid no process can have, and a command with a NUL byte', async () => {
      const kill = await t.api.kill(t.sessionId, 4_294_967_506);
      expect(kill.status).toBe(400);
      const nul = await execute({ command: 'echo a\u0000b' });
      expect(nul.status).toBe(400);
      expect(nul.body).toMatchObject({
        error: { code: 'invalid_request', details: { field: 'command' } },
      });
    });

    it('keeps a run whose client went away running (it outlives its connection) until killed', async () => {
      const controller = new AbortController();
      const response = await t.api.executeStream(
        t.sessionId,
        { command: 'echo up; sleep 1002; echo never' },
        controller.signal,
      );
      const pid = Number(response.headers.get('x-process-pid'));
      expect(pid).toBeGreaterThan(0);
      expect(response.headers.get('x-process-id')).toMatch(/^proc_[a-f0-9]{16}$/);
      await response.body?.getReader().read();
      controller.abort();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const alive = await execute({ command: "pgrep -f 'sleep 100[2]' >/dev/null && echo alive" });
      expect(alive.body.stdout).toBe('alive\n');
      const killed = await t.api.kill(t.sessionId, pid);
      expect(killed.body).toMatchObject({ pids: expect.arrayContaining([pid]) });
      const gone = await execute({ command: "pgrep -f 'sleep 100[2]' || echo gone" });
      expect(gone.body.stdout).toBe('gone\n');
    });
  });
}

/** Background processes, kills (trees too), refusals, and runs whose client went away. */
export const processCases: ((t: AccountFixture) => void)[] = [processes, processRefusals];
