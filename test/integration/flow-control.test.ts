import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createAccount } from '../support/api';
import { useStack } from '../support/use-stack';

const t = useStack();

/**
 * A full garbage collection now: what a read holds, rather than the buffers it went through
 * and the engine has not collected yet. (Node 24's V8 collects those later than Node 20's:
 * 63 MB of them after a stalled 128 MB read, against 9 MB held, 2026-11-30.)
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * What this process (the gateway and the agent) holds after a garbage collection: its
 * buffers, and its heap (where a line from the runner is a string).
 */
function held(): number {
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** The API as a new account on the paid plan sees it, with a session of its own. */
async function paidSession(body: Record<string, unknown> = {}) {
  const api = t.as((await createAccount(t.stack, 'paid')).key);
  return { api, sessionId: await api.createSession(body) };
}

it('a slow stream reader slows the process instead of filling gateway or agent memory', async () => {
  const { api, sessionId } = await paidSession({ resourceLimits: { cpu: 2 } });
  const controller = new AbortController();
  // The gateway and the agent run in this process: its memory is theirs.
  const heldBefore = held();
  const response = await api.executeStream(
    sessionId,
    { command: 'head -c 1500000000 /dev/zero | tr "\\0" x', timeout: 120 },
    controller.signal,
  );
  expect(response.status).toBe(200);
  // Read nothing for a while. Unthrottled, 1.5 GB would be produced in a couple of seconds.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const growth = held() - heldBefore;
  const check = await api.execute(sessionId, {
    command: 'pgrep -x head >/dev/null && echo still-writing || echo done',
  });
  expect(check.body.stdout).toBe('still-writing\n');
  expect(growth).toBeLessThan(64 * 1024 * 1024);

  // Reading resumes the flow.
  const reader = response.body!.getReader();
  let received = 0;
  while (received < 50 * 1024 * 1024) {
    const { value, done } = await reader.read();
    if (done) break;
    received += value.length;
  }
  expect(received).toBeGreaterThanOrEqual(50 * 1024 * 1024);
  controller.abort();
  // The run outlives its reader (its output goes on to the run's log): ended here, so that the
  // next test measures its own read, not this writer's last gigabyte going through the agent.
  expect((await api.kill(sessionId)).status).toBe(200);
  const ended = await api.execute(sessionId, {
    command: 'while pgrep -x head >/dev/null; do sleep 0.1; done; echo ended',
  });
  expect(ended.body.stdout).toBe('ended\n');
});

// The file is four times the growth allowed: unthrottled, the gateway and the agent (both in this
// process) would hold all of it. (250 MB, made at 0.25 CPU and read through both, outlasted
// the test's minute on a machine busy with another suite.)
it('a slow reader of a large file holds the read in the sandbox instead of filling memory', async () => {
  const { api, sessionId } = await paidSession({ resourceLimits: { cpu: 1 } });
  const size = 128 * 1024 * 1024;
  const made = await api.execute(sessionId, {
    command: `head -c ${size} /dev/urandom > big.bin && echo made`,
  });
  expect(made.body.stdout).toBe('made\n');
  const heldBefore = held();
  const controller = new AbortController();
  const response = await api.readFile(sessionId, 'big.bin', controller.signal);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-length')).toBe(String(size));
  // Read nothing for a while: the file must not pile up in the gateway or the agent.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  expect(held() - heldBefore).toBeLessThan(size / 4);

  // Reading takes every byte, in order.
  const reader = response.body!.getReader();
  let received = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    received += value.length;
  }
  expect(received).toBe(size);
});
