import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import { DockerRuntime } from './docker-runtime';
import type { DockerRuntimeParts } from './docker-runtime-parts';
import { doubles, running } from './lifecycle/in-memory-doubles';
import { sandboxLabels } from './docker/container-spec';
import { sandboxSpec, testConfig } from './lifecycle/test-fixtures';
import { ProcessLogs } from './processes/process-logs';
import { RequestLoad } from './request-load';

const logger = createLogger({ name: 'test', level: 'silent' });
const processLogs = () => new ProcessLogs(mkdtempSync(join(tmpdir(), 'logs-')), logger);

/** A runtime on the lifecycle's doubles (all a create or a restore uses), and its load. */
function counted() {
  const d = doubles();
  const load = new RequestLoad();
  const runtime = new DockerRuntime({
    ...d,
    load,
    logs: processLogs(),
  } as unknown as DockerRuntimeParts);
  return { d, load, runtime };
}

/** Whether the node counted itself busy at each call of `target[method]`. */
function busyWhileCalled<T extends object>(
  load: RequestLoad,
  target: T,
  method: keyof T,
): boolean[] {
  const seen: boolean[] = [];
  const original = target[method] as (...args: unknown[]) => unknown;
  target[method] = ((...args: unknown[]) => {
    seen.push(load.busy());
    return original.apply(target, args);
  }) as T[keyof T];
  return seen;
}

describe('DockerRuntime', () => {
  it('counts a wake from deep sleep as a request served while it restores', async () => {
    const { d, load, runtime } = counted();
    await d.blobs.save('ses_1');
    const busyDuringRestore = busyWhileCalled(load, d.blobs, 'restore');

    await runtime.restore(sandboxSpec('ses_1'));

    expect(busyDuringRestore).toEqual([true]);
    expect(load.busy()).toBe(false);
  });

  it('counts a create as a request served until it is answered (the pool refills after)', async () => {
    const { d, load, runtime } = counted();
    const busyWhileMaking = busyWhileCalled(load, d.workspaces, 'create');

    await runtime.create(sandboxSpec('ses_1'));

    expect(busyWhileMaking).toEqual([true]);
    expect(load.busy()).toBe(false);
  });

  it("sends a leaving session's run logs with it, and takes them where it wakes", async () => {
    const d = doubles();
    const logs = processLogs();
    const runtime = new DockerRuntime({
      ...d,
      load: new RequestLoad(),
      logs,
    } as unknown as DockerRuntimeParts);
    await running(d, 'ses_1');
    logs.start({
      sessionId: 'ses_1',
      pid: 7,
      kind: 'command',
      source: 'true',
      stdin: false,
      capBytes: 1024,
    });

    // A plain deep sleep keeps them on the node.
    await runtime.hibernate('ses_1');
    expect(d.journal).not.toContain('blob.saveLogs ses_1');
    expect(logs.has('ses_1')).toBe(true);
    await runtime.restore(sandboxSpec('ses_1'));
    expect(d.journal).not.toContain('blob.restoreLogs ses_1');

    // Evacuated: saved to the store, gone from the node.
    await runtime.hibernate('ses_1', { evacuate: true });
    expect(d.journal).toContain('blob.saveLogs ses_1');
    expect(logs.has('ses_1')).toBe(false);
    // Woken (here, or on the node it moved to): taken back.
    await runtime.restore(sandboxSpec('ses_1'));
    expect(d.journal).toContain('blob.restoreLogs ses_1');
    expect(logs.has('ses_1')).toBe(true);
    expect(d.blobs.logs.has('ses_1')).toBe(false);
  });

  it('recreates sandboxes of another image in its first reconcile pass only', async () => {
    const { d, runtime } = counted();
    const stale = async (sessionId: string) => {
      await running(d, sessionId);
      d.containers.put(sessionId, 'running', sandboxLabels(sandboxSpec(sessionId), testConfig));
      d.containers.setImage(sessionId, 'sha256:older');
    };
    await stale('ses_1');
    expect((await runtime.reconcile()).rebuilt).toEqual(['ses_1']);
    await stale('ses_2');
    expect(await runtime.reconcile()).toEqual({ started: [], rebuilt: [] });
  });
});
