import { AppError } from '@sandbox/errors';
import { createSandbox, rebuildSandbox } from './create-sandbox';
import { doubles } from './in-memory-doubles';
import { dockerError, sandboxSpec } from './test-fixtures';

describe('createSandbox', () => {
  it('provisions the workspace, records the spec, starts the container, then warms the runner', async () => {
    const d = doubles();
    const info = await d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, sandboxSpec('ses_1')),
    );
    expect(info).toMatchObject({ sessionId: 'ses_1', status: 'running' });
    expect(info.containerId).not.toBe('');
    expect(d.journal).toEqual([
      'workspace.create ses_1',
      'spec.write ses_1',
      'container.create ses_1',
      'runner.warmUp ses_1',
    ]);
    expect(await d.specs.read('ses_1')).toEqual(sandboxSpec('ses_1'));
  });

  it('returns the existing sandbox of a known session without making another', async () => {
    const d = doubles();
    await d.specs.write(sandboxSpec('ses_1'));
    d.journal.length = 0;
    const existing = d.containers.put('ses_1', 'running');
    const info = await d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, sandboxSpec('ses_1')),
    );
    expect(info.containerId).toBe(existing.id);
    expect(d.journal).toEqual([]);
  });

  it('does not ask Docker for the sandbox of a session it has no spec of (a new one)', async () => {
    const d = doubles();
    const find = jest.spyOn(d.containers, 'find');
    await d.locks.withLock('ses_1', (lock) => createSandbox(d, lock, sandboxSpec('ses_1')));
    expect(find.mock.calls.map(([name]) => name)).not.toContain('sbx-ses_1');
  });

  it('refuses more CPUs than the host has as invalid_request, making nothing', async () => {
    const d = doubles();
    const create = d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, sandboxSpec('ses_1', d.hostCpus + 1)),
    );
    await expect(create).rejects.toMatchObject({
      code: 'invalid_request',
      details: { field: 'resourceLimits.cpu', max: d.hostCpus },
    });
    expect(d.journal).toEqual([]);
  });

  it('answers with the sandbox created concurrently when Docker says 409', async () => {
    const d = doubles();
    d.containers.failCreate = dockerError(409);
    // The other creator's container appears as ours is refused (a new session's create asks
    // Docker for it only then).
    const find = d.containers.find.bind(d.containers);
    let calls = 0;
    d.containers.find = (name) => {
      calls += 1;
      if (calls === 1) d.containers.put('ses_1', 'running');
      return find(name);
    };
    const info = await d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, sandboxSpec('ses_1')),
    );
    expect(info.status).toBe('running');
    expect(d.journal).not.toContain('workspace.destroy ses_1');
  });

  it('removes the container and the workspace when the start fails, as service_unavailable', async () => {
    const d = doubles();
    d.containers.failCreate = dockerError(500);
    const create = d.locks.withLock('ses_1', (lock) =>
      createSandbox(d, lock, sandboxSpec('ses_1')),
    );
    await expect(create).rejects.toBeInstanceOf(AppError);
    await expect(create).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(d.journal).toContain('workspace.destroy ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(false);
  });
});

describe('rebuildSandbox', () => {
  it('never removes the kept disk when the start fails', async () => {
    const d = doubles();
    d.workspaces.disks.set('ses_1', { attaches: true });
    d.containers.failCreate = dockerError(500);
    const rebuild = d.locks.withLock('ses_1', (lock) =>
      rebuildSandbox(d, lock, sandboxSpec('ses_1')),
    );
    await expect(rebuild).rejects.toMatchObject({ code: 'service_unavailable' });
    expect(d.journal).toContain('container.remove ses_1');
    expect(d.journal).not.toContain('workspace.destroy ses_1');
    expect(d.workspaces.disks.has('ses_1')).toBe(true);
  });
});
