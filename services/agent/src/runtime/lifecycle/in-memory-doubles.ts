import { mkdirSync } from 'node:fs';
import { isAllowAll, type EgressPolicy } from '@sandbox/contract';
import { createLogger } from '@sandbox/logger';
import type {
  ContainerClient,
  ContainerCreateOptions,
  ContainerLimits,
  ContainerState,
  ContainerSummary,
  HostProcess,
  NetworkCreateOptions,
  NetworkState,
} from '../docker/container-client';
import type { ContainerConfig } from '../docker/container-spec';
import { containerName } from '../docker/docker-names';
import { SessionLocks } from '../locks/session-locks';
import type { SandboxSpec } from '../sandbox-runtime';
import type { ArchiveManifest } from '../storage/blob-store';
import type { AdoptableWorkspaces } from '../storage/workspaces';
import type {
  EgressRules,
  LifecycleDeps,
  Runners,
  RunnerStats,
  SandboxAddress,
  SavedWorkspaces,
  SpecStore,
} from './lifecycle-deps';

/** In-memory doubles of the lifecycle's collaborators, for unit tests (no Docker, no disk). */

/** Every step the doubles took, in order, e.g. `container.create ses_1`. */
export type Journal = string[];

/** A Docker Engine error, as dockerode rejects with it. */
export const dockerError = (statusCode: number) =>
  Object.assign(new Error(`docker answered ${statusCode}`), { statusCode });

interface FakeContainer {
  state: ContainerState;
  labels: Record<string, string>;
  options: ContainerCreateOptions;
}

export class FakeContainers implements ContainerClient {
  readonly byName = new Map<string, FakeContainer>();
  /** The next `createAndStart` rejects with this. */
  failCreate: Error | undefined;
  /** The next `rename` rejects with this. */
  failRename: Error | undefined;
  /** The next `remove` rejects with this. */
  failRemove: Error | undefined;
  private nextId = 1;

  constructor(private readonly journal: Journal) {}

  /** A container of the session in `status` (running, paused, exited...), made behind our back. */
  put(sessionId: string, status: string, labels: Record<string, string> = {}): ContainerState {
    const state: ContainerState = {
      id: `ctr-${this.nextId++}`,
      running: status === 'running' || status === 'paused',
      paused: status === 'paused',
      status,
      pid: 4242,
      ownKernel: false,
      memoryBytes: 0,
      pidsLimit: 0,
      addresses: { [testConfig.sandboxNetwork]: `172.30.0.${this.nextId}` },
      labels,
    };
    this.byName.set(containerName(sessionId), { state, labels, options: {} });
    return state;
  }

  private entry(container: string): FakeContainer | undefined {
    return (
      this.byName.get(container) ?? [...this.byName.values()].find((c) => c.state.id === container)
    );
  }

  private sessionOf(container: string): string {
    const name = [...this.byName.entries()].find(
      ([key, c]) => key === container || c.state.id === container,
    )?.[0];
    return (name ?? container).replace(/^sbx-/, '');
  }

  find(container: string): Promise<ContainerState | undefined> {
    const found = this.entry(container);
    return Promise.resolve(found === undefined ? undefined : { ...found.state });
  }

  createAndStart(options: ContainerCreateOptions): Promise<string> {
    const name = options.name ?? '';
    this.journal.push(`container.create ${name.replace(/^sbx-/, '')}`);
    const failure = this.failCreate;
    this.failCreate = undefined;
    if (failure !== undefined) return Promise.reject(failure);
    if (this.byName.has(name)) return Promise.reject(dockerError(409));
    const state = this.put(name.replace(/^sbx-/, ''), 'running', options.Labels ?? {});
    this.byName.get(name)!.options = options;
    return Promise.resolve(state.id);
  }

  remove(container: string): Promise<boolean> {
    this.journal.push(`container.remove ${this.sessionOf(container)}`);
    const failure = this.failRemove;
    this.failRemove = undefined;
    if (failure !== undefined) return Promise.reject(failure);
    const found = this.entry(container);
    if (found === undefined) return Promise.resolve(false);
    for (const [name, c] of this.byName) if (c === found) this.byName.delete(name);
    return Promise.resolve(true);
  }

  private set(container: string, step: string, change: Partial<ContainerState>): Promise<void> {
    this.journal.push(`container.${step} ${this.sessionOf(container)}`);
    const found = this.entry(container);
    if (found === undefined) return Promise.reject(dockerError(404));
    Object.assign(found.state, change);
    return Promise.resolve();
  }

  rename(container: string, name: string): Promise<void> {
    this.journal.push(`container.rename ${this.sessionOf(container)} ${name.replace(/^sbx-/, '')}`);
    const failure = this.failRename;
    this.failRename = undefined;
    if (failure !== undefined) return Promise.reject(failure);
    const found = this.entry(container);
    if (found === undefined) return Promise.reject(dockerError(404));
    if (this.byName.has(name)) return Promise.reject(dockerError(409));
    for (const [key, c] of this.byName) if (c === found) this.byName.delete(key);
    this.byName.set(name, found);
    return Promise.resolve();
  }

  updateLimits(container: string, limits: ContainerLimits): Promise<void> {
    this.journal.push(`container.update ${this.sessionOf(container)}`);
    const found = this.entry(container);
    if (found === undefined) return Promise.reject(dockerError(404));
    found.state.memoryBytes = limits.memoryBytes;
    found.state.pidsLimit = limits.pidsLimit;
    return Promise.resolve();
  }

  pause(container: string): Promise<void> {
    return this.set(container, 'pause', { paused: true, status: 'paused' });
  }

  unpause(container: string): Promise<void> {
    return this.set(container, 'unpause', { paused: false, status: 'running' });
  }

  start(container: string): Promise<void> {
    return this.set(container, 'start', { running: true, status: 'running' });
  }

  top(): Promise<HostProcess[]> {
    return Promise.resolve([]);
  }

  execute(): Promise<{ code: number; stdout: string }> {
    return Promise.resolve({ code: 0, stdout: '' });
  }

  ownKernel(_runtime: string | undefined): Promise<boolean> {
    return Promise.resolve(false);
  }

  listByLabel(key: string, value: string): Promise<ContainerSummary[]> {
    return Promise.resolve(
      [...this.byName.entries()]
        .filter(([, c]) => c.labels[key] === value)
        .map(([name, c]) => ({ id: c.state.id, name, labels: c.labels, state: c.state.status })),
    );
  }

  createNetwork(_options: NetworkCreateOptions): Promise<boolean> {
    return Promise.resolve(false);
  }

  inspectNetwork(name: string): Promise<NetworkState> {
    return Promise.resolve({ id: name, options: {} });
  }

  inspectImage(_name: string): Promise<void> {
    return Promise.resolve();
  }
}

export class FakeWorkspaces implements AdoptableWorkspaces {
  /** Sessions with a disk, and whether it attaches (false: lost, e.g. after a reboot). */
  readonly disks = new Map<string, { attaches: boolean }>();

  constructor(private readonly journal: Journal) {}

  create(sessionId: string): Promise<string> {
    this.journal.push(`workspace.create ${sessionId}`);
    if (!this.disks.has(sessionId)) this.disks.set(sessionId, { attaches: true });
    return Promise.resolve(`/disks/${sessionId}:/workspace:rw`);
  }

  destroy(sessionId: string): Promise<boolean> {
    this.journal.push(`workspace.destroy ${sessionId}`);
    return Promise.resolve(this.disks.delete(sessionId));
  }

  hostPath(sessionId: string): Promise<string> {
    return Promise.resolve(`/nonexistent/disks/${sessionId}`);
  }

  attach(sessionId: string): Promise<boolean> {
    return Promise.resolve(this.disks.get(sessionId)?.attaches ?? false);
  }

  adopt(from: string, to: string): Promise<void> {
    this.journal.push(`workspace.adopt ${from} ${to}`);
    const disk = this.disks.get(from);
    if (disk === undefined || this.disks.has(to)) {
      return Promise.reject(new Error(`cannot adopt ${from} as ${to}`));
    }
    this.disks.delete(from);
    this.disks.set(to, disk);
    return Promise.resolve();
  }

  slots(): Promise<string[]> {
    return Promise.resolve([...this.disks.keys()]);
  }
}

export class FakeBlobs implements SavedWorkspaces {
  readonly saved = new Map<string, ArchiveManifest>();

  constructor(private readonly journal: Journal) {}

  manifest(sessionId: string): Promise<ArchiveManifest | undefined> {
    return Promise.resolve(this.saved.get(sessionId));
  }

  save(sessionId: string): Promise<ArchiveManifest> {
    this.journal.push(`blob.save ${sessionId}`);
    const manifest = { sha256: '0'.repeat(64), bytes: 100, filesCount: 3 };
    this.saved.set(sessionId, manifest);
    return Promise.resolve(manifest);
  }

  /** What `bytesInUse` answers. */
  inUse = 100;

  bytesInUse(): Promise<number> {
    return Promise.resolve(this.inUse);
  }

  keepDisk(sessionId: string): Promise<ArchiveManifest> {
    this.journal.push(`blob.keepDisk ${sessionId}`);
    const manifest = { sha256: '', bytes: 100, filesCount: 3, format: 'disk' as const };
    this.saved.set(sessionId, manifest);
    return Promise.resolve(manifest);
  }

  /** When set, restores fail with it (after the journal entry). */
  failRestore: Error | undefined;

  restore(sessionId: string): Promise<ArchiveManifest> {
    this.journal.push(`blob.restore ${sessionId}`);
    if (this.failRestore !== undefined) return Promise.reject(this.failRestore);
    const manifest = this.saved.get(sessionId);
    return manifest === undefined
      ? Promise.reject(new Error('nothing saved'))
      : Promise.resolve(manifest);
  }

  /** Sessions whose manifest is gone but whose archive is not (yet). */
  readonly unnamed = new Set<string>();

  forget(sessionId: string): Promise<void> {
    this.journal.push(`blob.forget ${sessionId}`);
    if (this.saved.delete(sessionId)) this.unnamed.add(sessionId);
    return Promise.resolve();
  }

  remove(sessionId: string): Promise<void> {
    this.journal.push(`blob.remove ${sessionId}`);
    this.saved.delete(sessionId);
    this.unnamed.delete(sessionId);
    return Promise.resolve();
  }

  removeLogs(sessionId: string): Promise<void> {
    this.journal.push(`blob.removeLogs ${sessionId}`);
    this.logs.delete(sessionId);
    return Promise.resolve();
  }

  /** Sessions whose run logs were saved for a move. */
  readonly logs = new Set<string>();

  saveLogs(sessionId: string): Promise<boolean> {
    this.journal.push(`blob.saveLogs ${sessionId}`);
    this.logs.add(sessionId);
    return Promise.resolve(true);
  }

  /** Takes the session's saved logs: an empty directory of them at `target`. */
  restoreLogs(sessionId: string, target: string): Promise<boolean> {
    this.journal.push(`blob.restoreLogs ${sessionId}`);
    const had = this.logs.delete(sessionId);
    if (had) mkdirSync(target, { recursive: true });
    return Promise.resolve(had);
  }
}

export class FakeSpecs implements SpecStore {
  readonly specs = new Map<string, SandboxSpec>();

  constructor(private readonly journal: Journal) {}

  write(spec: SandboxSpec): Promise<void> {
    this.journal.push(`spec.write ${spec.sessionId}`);
    this.specs.set(spec.sessionId, spec);
    return Promise.resolve();
  }

  read(sessionId: string): Promise<SandboxSpec | undefined> {
    return Promise.resolve(this.specs.get(sessionId));
  }

  remove(sessionId: string): Promise<void> {
    this.journal.push(`spec.remove ${sessionId}`);
    this.specs.delete(sessionId);
    return Promise.resolve();
  }

  list(): Promise<SandboxSpec[]> {
    return Promise.resolve([...this.specs.values()]);
  }
}

export class FakeRunners implements Runners {
  /** When set, the next warm-up fails with it (once). */
  failWarmUp: Error | undefined;

  constructor(private readonly journal: Journal) {}

  warmUp(sessionId: string): Promise<void> {
    this.journal.push(`runner.warmUp ${sessionId}`);
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

export const testConfig: ContainerConfig = {
  sandboxImage: 'sandbox-runtime:test',
  sandboxNetwork: 'sandbox-net',
  sandboxRuntime: undefined,
  nodeId: 'node-1',
  labelPrefix: 'io.sandbox',
  extraCaCertsPath: undefined,
  pidsLimit: 256,
  nofileLimit: 1024,
  deepSleep: 'archive',
  deepSleepDiskMinBytes: 0,
};

export function sandboxSpec(sessionId: string, cpu = 1): SandboxSpec {
  return { sessionId, accountId: 'acc_1', limits: { memoryMb: 256, cpu, diskMb: 512, pids: 64 } };
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
