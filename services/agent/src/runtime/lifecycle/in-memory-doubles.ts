import { isAllowAll, type EgressPolicy } from '@sandbox/contract';
import { createLogger } from '@sandbox/logger';
import { SessionLocks } from '../locks/session-locks';
import { FakeContainers } from './fake-containers';
import { FakeBlobs, FakeSpecs, FakeWorkspaces } from './fake-storage';
import type {
  EgressRules,
  LifecycleDeps,
  Runners,
  RunnerStats,
  SandboxAddress,
} from './lifecycle-deps';
import { sandboxSpec, testConfig, type Journal } from './test-fixtures';

/**
 * In-memory doubles of the lifecycle's collaborators, for unit tests (no Docker, no disk): the
 * runners and egress rules here, containers (fake-containers.ts) and storage (fake-storage.ts)
 * beside them; `doubles()` makes them all over one journal.
 */

export class FakeRunners implements Runners {
  /** When set, the next warm-up fails with it (once). */
  failWarmUp: Error | undefined;

  constructor(private readonly journal: Journal) {}

  warmUp(sessionId: string, _containerId?: string, options?: { settled?: boolean }): Promise<void> {
    this.journal.push(`runner.warmUp ${sessionId}${options?.settled === true ? ' settled' : ''}`);
    const failure = this.failWarmUp;
    this.failWarmUp = undefined;
    return failure === undefined ? Promise.resolve() : Promise.reject(failure);
  }

  lastStats(): undefined {
    return undefined;
  }

  stats(): Promise<RunnerStats> {
    return Promise.resolve({ filesCount: 0, activeProcesses: 0 });
  }

  close(sessionId: string): void {
    this.journal.push(`runner.close ${sessionId}`);
  }

  adopt(from: string, to: string): void {
    this.journal.push(`runner.adopt ${from} ${to}`);
  }
}

/** Egress policies held in memory: each change is journaled (`egress.apply ses policy ip`). */
export class FakeEgress implements EgressRules {
  readonly held = new Map<string, { address: SandboxAddress; policy: EgressPolicy }>();

  constructor(private readonly journal: Journal) {}

  apply(sessionId: string, address: SandboxAddress, policy: EgressPolicy): Promise<void> {
    return this.applyAll([{ sessionId, address, policy }]);
  }

  applyAll(
    entries: ReadonlyArray<{ sessionId: string; address: SandboxAddress; policy: EgressPolicy }>,
  ): Promise<void> {
    for (const { sessionId, address, policy } of entries) {
      this.journal.push(`egress.apply ${sessionId} ${policy.default} ${address.ip}`);
      if (isAllowAll(policy)) this.held.delete(sessionId);
      else this.held.set(sessionId, { address, policy });
    }
    return Promise.resolve();
  }

  holds(sessionId: string): boolean {
    return this.held.has(sessionId);
  }

  count(): number {
    return this.held.size;
  }

  forget(sessionId: string): Promise<void> {
    if (this.held.delete(sessionId)) this.journal.push(`egress.forget ${sessionId}`);
    return Promise.resolve();
  }
}

export interface Doubles extends LifecycleDeps {
  journal: Journal;
  containers: FakeContainers;
  workspaces: FakeWorkspaces;
  blobs: FakeBlobs;
  specs: FakeSpecs;
  runners: FakeRunners;
  egress: FakeEgress;
}

/** Lifecycle dependencies made of in-memory doubles, sharing one journal. */
export function doubles(): Doubles {
  const journal: Journal = [];
  return {
    journal,
    containers: new FakeContainers(journal),
    workspaces: new FakeWorkspaces(journal),
    blobs: new FakeBlobs(journal),
    specs: new FakeSpecs(journal),
    runners: new FakeRunners(journal),
    egress: new FakeEgress(journal),
    locks: new SessionLocks(),
    logger: createLogger({ name: 'test', level: 'silent' }),
    config: testConfig,
    hostCpus: 4,
  };
}

/** A session with a running sandbox on its disk (the journal emptied). */
export async function running(d: Doubles, sessionId: string): Promise<void> {
  await d.specs.write(sandboxSpec(sessionId));
  d.workspaces.disks.set(sessionId, { attaches: true });
  d.containers.put(sessionId, 'running');
  d.journal.length = 0;
}
