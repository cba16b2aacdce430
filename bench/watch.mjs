// pnpm bench's file watch row (ADR 60): how long after a run began its change reaches a
// watching client, beside that run's own answer, in the same rounds (the baseline: the change
// is the run's, so the event cannot come before the run made it).
import { elapsedMs, row } from './lib.mjs';

/** Watches `bench-watch` of the session; `seen(name)` resolves once an event names it. */
async function openWatch(stack, sessionId) {
  const abort = new AbortController();
  const response = await fetch(
    `${stack.url}/v1/files/watch?sessionId=${sessionId}&path=bench-watch`,
    { headers: { authorization: `Bearer ${stack.key}` }, signal: abort.signal },
  );
  if (response.status !== 200)
    throw new Error(`watch: ${response.status} ${await response.text()}`);
  const waiters = new Map();
  let ready;
  const isReady = new Promise((resolve) => (ready = resolve));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    let text = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done) return;
      text += decoder.decode(value, { stream: true });
      const end = text.lastIndexOf('\n\n');
      if (end < 0) continue;
      const events = text.slice(0, end);
      text = text.slice(end + 2);
      if (events.includes('event: ready')) ready();
      for (const [, name] of events.matchAll(/"path":"bench-watch\/([^"]+)"/g)) {
        waiters.get(name)?.();
      }
    }
  })();
  await isReady;
  return {
    seen: (name) => new Promise((resolve) => waiters.set(name, resolve)),
    close: () => abort.abort(),
  };
}

export async function watchRows(stack, sessionId, rounds, warmup = 5) {
  await stack.api('/execute', { sessionId, command: 'mkdir -p bench-watch' });
  const watch = await openWatch(stack, sessionId);
  const seen = [];
  const answered = [];
  for (let i = 0; i < warmup + rounds; i += 1) {
    const name = `f${i}`;
    const event = watch.seen(name);
    const started = process.hrtime.bigint();
    const ran = stack
      .api('/execute', { sessionId, command: `touch bench-watch/${name}` })
      .then(() => elapsedMs(started));
    const seenMs = await event.then(() => elapsedMs(started));
    const answeredMs = await ran;
    if (i < warmup) continue;
    seen.push(seenMs);
    answered.push(answeredMs);
  }
  watch.close();
  return [
    row('file watch: a run touches a file, its event reaches the watcher', rounds, seen, {
      note: 'from the run request; the event comes from inotify in the sandbox',
    }),
    row('baseline: that run answered (execute `touch`)', rounds, answered),
  ];
}
