import { createLogger } from '@sandbox/logger';
import type { AgentPool } from '../agents/agent-pool';
import { SessionLifecycle } from './session-lifecycle';
import type { SessionStore } from './session-store';

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
        },
      }),
    } as unknown as AgentPool;
    const lifecycle = new SessionLifecycle(
      store,
      agents,
      { idleAfterS: 300, deepSleepAfterS: 1800 },
      createLogger({ name: 'test', level: 'silent' }),
    );
    const { idled } = await lifecycle.pass();
    expect(idled).toEqual(['ses_a', 'ses_c', 'ses_d']);
    expect(most).toBe(4);
  });
});
