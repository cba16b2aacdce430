import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LiveStacks } from './live-stacks.mjs';

const fakeStack = (stopped, name, fail = false) => ({
  stop: async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (fail) throw new Error(`${name} failed`);
    stopped.push(name);
  },
});

test('a signal stops the stacks still up, then exits 130; a stopped stack is forgotten', async () => {
  const stopped = [];
  const exits = [];
  const logged = [];
  const live = new LiveStacks({
    exit: (code) => exits.push(code),
    log: (line) => logged.push(line),
  });
  const a = live.add(fakeStack(stopped, 'a'));
  live.add(fakeStack(stopped, 'b'));
  live.add(fakeStack(stopped, 'c', true));
  await a.stop();
  assert.equal(live.size, 2);
  await live.onSignal('SIGINT');
  assert.deepEqual(stopped, ['a', 'b']);
  assert.deepEqual(exits, [130]);
  assert.match(logged.join('\n'), /c failed/);
  assert.equal(live.size, 0);
});

test('a second signal exits at once, without waiting for the stacks', async () => {
  const exits = [];
  const live = new LiveStacks({ exit: (code) => exits.push(code), log: () => undefined });
  live.add({ stop: () => new Promise(() => undefined) }); // never stops
  void live.onSignal('SIGINT');
  assert.deepEqual(exits, []);
  void live.onSignal('SIGINT');
  assert.deepEqual(exits, [130]);
});

test("a stack stops once, whoever asks: the signal's stop and the bench's own", async () => {
  let stops = 0;
  const live = new LiveStacks({ exit: () => undefined, log: () => undefined });
  const stack = live.add({
    stop: async () => {
      stops += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
    },
  });
  await Promise.all([live.onSignal('SIGTERM'), stack.stop(), stack.stop()]);
  assert.equal(stops, 1);
});
