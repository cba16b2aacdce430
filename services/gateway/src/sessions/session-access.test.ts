import { AppError } from '@sandbox/errors';
import type { AgentClient } from '../agents/agent-client';
import type { AgentPool } from '../nodes/agent-pool';
import type { Principal } from '../auth/principal';
import { SessionAccess } from './session-access';
import type { SessionLifecycle } from './session-lifecycle';
import type { SessionRecord } from './session-record';
import type { SessionStore } from './session-store';

const session = {
  id: 'ses_1',
  accountId: 'acc_1',
  nodeId: 'node-a',
  state: 'idle',
} as SessionRecord;
const principal = { accountId: 'acc_1' } as Principal;
const agent = { nodeId: 'node-a' } as AgentClient;

function access(steps: string[]) {
  const store = {
    touch: (accountId: string, id: string) => {
      steps.push(`touch ${accountId} ${id}`);
      if (accountId !== session.accountId) throw new AppError('session_not_found', 'no');
      return Promise.resolve(session);
    },
    touchById: (id: string) => {
      steps.push(`touchById ${id}`);
      return Promise.resolve(session);
    },
  } as unknown as SessionStore;
  const lifecycle = {
    keepActiveWhile: (id: string, atEnd: () => void) => {
      steps.push(`keep ${id} active`);
      return atEnd;
    },
    ensureAwake: (found: SessionRecord) => {
      steps.push(`wake ${found.id}`);
      return Promise.resolve(found);
    },
  } as unknown as SessionLifecycle;
  const agents = {
    recheck: (nodeId: string) => {
      steps.push(`recheck ${nodeId}`);
      return Promise.resolve();
    },
    forNode: (nodeId: string) => {
      steps.push(`agent ${nodeId}`);
      return agent;
    },
  } as unknown as AgentPool;
  const activity = {
    touch: store.touch.bind(store),
    seen: (id: string) => steps.push(`seen ${id}`),
  };
  return new SessionAccess(store, activity, agents, lifecycle);
}

describe('SessionAccess', () => {
  it('touches the session, lets the caller vet it, wakes it and gives its agent', async () => {
    const steps: string[] = [];
    const opened = await access(steps).open(principal, 'ses_1', (found) => {
      steps.push(`vet ${found.id}`);
      return 42;
    });
    expect(opened).toEqual({ session, agent, vetted: 42 });
    expect(steps).toEqual([
      'touch acc_1 ses_1',
      'vet ses_1',
      'recheck node-a',
      'wake ses_1',
      'agent node-a',
    ]);
  });

  it('does not wake a session whose request the caller refuses', async () => {
    const steps: string[] = [];
    const refusal = new AppError('invalid_request', 'no');
    await expect(
      access(steps).open(principal, 'ses_1', () => {
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(steps).toEqual(['touch acc_1 ses_1']);
  });

  it("answers another account's session as not found, before anything else", async () => {
    const steps: string[] = [];
    await expect(access(steps).open({ accountId: 'acc_2' }, 'ses_1')).rejects.toMatchObject({
      code: 'session_not_found',
    });
    expect(steps).toEqual(['touch acc_2 ses_1']);
  });

  it('opens a session for a preview by its id alone, through the same steps', async () => {
    const steps: string[] = [];
    expect(await access(steps).openForPreview('ses_1')).toEqual({ session, agent });
    expect(steps).toEqual(['touchById ses_1', 'recheck node-a', 'wake ses_1', 'agent node-a']);
  });

  it('records the end of a long request as activity that can wait for the next flush', () => {
    const steps: string[] = [];
    const stop = access(steps).keepActiveWhile('ses_1');
    expect(steps).toEqual(['keep ses_1 active']);
    stop();
    expect(steps).toEqual(['keep ses_1 active', 'seen ses_1']);
  });
});
