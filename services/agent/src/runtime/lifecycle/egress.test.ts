import type { EgressPolicy } from '@sandbox/contract';
import { createSandbox } from './create-sandbox';
import { heal } from './heal';
import { doubles } from './in-memory-doubles';
import { reconcile } from './reconcile';
import { removeSandbox } from './remove-sandbox';
import { sandboxSpec } from './test-fixtures';

const denyAll: EgressPolicy = { default: 'deny', allow: [], deny: [] };

describe("a sandbox held to its session's egress policy", () => {
  it('from its start, before the session can use it', async () => {
    const d = doubles();
    await d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, { ...sandboxSpec('ses_1'), egress: denyAll }),
    );
    const applied = d.journal.findIndex((line) => line.startsWith('egress.apply ses_1 deny'));
    expect(applied).toBeGreaterThan(d.journal.indexOf('container.create ses_1'));
    expect(applied).toBeLessThan(d.journal.indexOf('runner.warmUp ses_1'));
    expect(d.egress.held.get('ses_1')?.policy).toEqual(denyAll);
  });

  it('fails the create, leaving nothing, when the policy cannot be applied', async () => {
    const d = doubles();
    d.egress.apply = () => Promise.reject(new Error('iptables is gone'));
    const create = d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, { ...sandboxSpec('ses_1'), egress: denyAll }),
    );
    await expect(create).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(d.journal).toContain('container.remove ses_1');
    expect(d.journal).toContain('workspace.destroy ses_1');
  });

  it('again when a stopped sandbox starts (its address and namespace are new)', async () => {
    const d = doubles();
    await d.specs.write({ ...sandboxSpec('ses_1'), egress: denyAll });
    d.workspaces.disks.set('ses_1', { attaches: true });
    const stopped = d.containers.put('ses_1', 'exited');
    await d.locks.withLock('ses_1', (lock) => heal(d, lock, stopped));
    expect(d.journal.some((line) => line.startsWith('egress.apply ses_1 deny'))).toBe(true);
  });

  it("again for every running sandbox in a reconcile pass (an agent's restart), all at once", async () => {
    const d = doubles();
    for (const id of ['ses_1', 'ses_2']) {
      await d.specs.write({ ...sandboxSpec(id), ...(id === 'ses_1' ? { egress: denyAll } : {}) });
      d.containers.put(id, 'running', { 'io.sandbox.node': 'node-1', 'io.sandbox.session': id });
    }
    let batches = 0;
    const applyAll = d.egress.applyAll.bind(d.egress);
    d.egress.applyAll = (entries) => {
      batches += 1;
      return applyAll(entries);
    };
    await reconcile(d);
    expect(batches).toBe(1);
    expect(d.egress.holds('ses_1')).toBe(true);
    expect(d.egress.holds('ses_2')).toBe(false);
  });

  it('no longer once its sandbox is removed (its address is free for another)', async () => {
    const d = doubles();
    await d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, { ...sandboxSpec('ses_1'), egress: denyAll }),
    );
    await d.locks.withLock('ses_1', (lock) => removeSandbox(d, lock));
    expect(d.egress.holds('ses_1')).toBe(false);
  });
});
