import { createLogger } from '@sandbox/logger';
import type { AgentPool } from '../nodes/agent-pool';
import { SessionLifecycle, unusedForMs } from './session-lifecycle';
import type { SessionStore } from './session-store';

/** A lifecycle with the default delays (idle after 300 s, deep sleep after 1800 s). */
const lifecycleOver = (store: SessionStore, agents: AgentPool) =>
  new SessionLifecycle(
    store,
    agents,
    { idleAfterS: 300, deepSleepAfterS: 1800 },
    createLogger({ name: 'test', level: 'silent' }),
  );

describe('SessionLifecycle.pass', () => {
  it('pauses the sessions due together side by side, and one failure stops no other', async () => {
    const due = ['ses_a', 'ses_b', 'ses_c', 'ses_d'].map((id) => ({ id, nodeId: 'node-a' }));
    const store = {
      markDeepSleepDue: () => Promise.resolve([]),
      markIdleDue: () => Promise.resolve(due),
    } as unknown as SessionStore;
    let running = 0;
    let most = 0;
    const agents = {
      forNode: () => ({
        pauseSandbox: async (id: string) => {
          running += 1;
          most = Math.max(most, running);
          await new Promise((resolve) => setTimeout(resolve, 20));
          running -= 1;
          if (id === 'ses_b') throw new Error('node away');
          return { paused: true };
        },
      }),
    } as unknown as AgentPool;
    const lifecycle = lifecycleOver(store, agents);
    const { idled } = await lifecycle.pass();
    expect(idled).toEqual(['ses_a', 'ses_c', 'ses_d']);
    expect(most).toBe(4);
  });

  it('asks the node to wait for the delay, and makes a session it refused active again', async () => {
    const awake: string[][] = [];
    const asked: Array<[string, number]> = [];
    const store = {
      markDeepSleepDue: () => Promise.resolve([{ id: 'ses_deep', nodeId: 'node-a' }]),
      markIdleDue: () => Promise.resolve([{ id: 'ses_idle', nodeId: 'node-a' }]),
      markAwake: (id: string, from: string) => {
        awake.push([id, from]);
        return Promise.resolve();
      },
      confirmSleep: () => Promise.reject(new Error('not confirmed: it was in use')),
    } as unknown as SessionStore;
    const agents = {
      forNode: () => ({
        pauseSandbox: (id: string, unusedForMs: number) => {
          asked.push([id, unusedForMs]);
          return Promise.resolve({ paused: false });
        },
        hibernateSandbox: (id: string, { unusedForMs }: { unusedForMs: number }) => {
          asked.push([id, unusedForMs]);
          return Promise.resolve({ filesCount: 0, inUse: true });
        },
      }),
    } as unknown as AgentPool;
    const lifecycle = lifecycleOver(store, agents);
    expect(await lifecycle.pass()).toEqual({ idled: [], slept: [] });
    // The delay less a second: the node counts a request's use from its end.
    expect(asked).toEqual([
      ['ses_deep', 1_799_000],
      ['ses_idle', 299_000],
    ]);
    expect(awake).toEqual([
      ['ses_deep', 'deep-sleep'],
      ['ses_idle', 'idle'],
    ]);
  });

  it('leaves half of a short delay as slack', () => {
    expect(unusedForMs(1)).toBe(500);
    expect(unusedForMs(2)).toBe(1000);
    expect(unusedForMs(300)).toBe(299_000);
  });
});
