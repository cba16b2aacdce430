import type { CgroupFreezer } from '../docker/cgroup-freezer';
import type { EgressPolicy } from '@sandbox/contract';
import type { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import type { ContainerClient } from '../docker/container-client';
import type { ContainerConfig } from '../docker/container-spec';
import type { SessionLocks } from '../locks/session-locks';
import type { SandboxLimits, SandboxSpec } from '../sandbox-runtime';
import type { ArchiveManifest } from '../storage/blob-store';
import type { Hold } from '../storage/held-archive';
import type { Admission } from '../admission';
import type { WorkspaceStore } from '../storage/workspaces';

/** Saved workspaces of deep-sleeping sessions (`BlobStore`). */
export interface SavedWorkspaces {
  manifest(sessionId: string): Promise<ArchiveManifest | undefined>;
  /** Archives `source` (a workspace on the host) and verifies what was stored. */
  save(sessionId: string, source: string): Promise<ArchiveManifest>;
  /** Bytes in use on the filesystem of `source` (a workspace on the host). */
  bytesInUse(source: string): Promise<number>;
  /** Records that the session's own disk (`source`) is kept as its saved workspace. */
  keepDisk(sessionId: string, source: string): Promise<ArchiveManifest>;
  /** Unpacks the saved workspace into `target`. */
  restore(sessionId: string, target: string): Promise<ArchiveManifest>;
  /** Deletes the manifest only: the session has no saved copy from then on. */
  forget(sessionId: string): Promise<void>;
  /** Deletes the manifest, then the archive. */
  remove(sessionId: string): Promise<void>;
  /** Deletes run logs saved for a move. */
  removeLogs(sessionId: string): Promise<void>;
  /** Archives a session's run logs (`dir`) for the node it moves to; false when none. */
  saveLogs(sessionId: string, dir: string): Promise<boolean>;
  /** Unpacks a moved session's run logs into `target` and removes them; false when none. */
  restoreLogs(sessionId: string, target: string): Promise<boolean>;
  /** Stores a snapshot of the workspace `hold` gives, packed while held (ADR 44). */
  saveSnapshot(snapshotId: string, hold: Hold): Promise<ArchiveManifest>;
  /** Unpacks a snapshot into `target` (a new workspace); 404 snapshot_not_found. */
  restoreSnapshot(snapshotId: string, target: string): Promise<ArchiveManifest>;
  /** Deletes a snapshot; deleting a missing one is no error. */
  removeSnapshot(snapshotId: string): Promise<void>;
}

/** What each sandbox of this node was created with (`SandboxSpecs`). */
export interface SpecStore {
  write(spec: SandboxSpec): Promise<void>;
  read(sessionId: string): Promise<SandboxSpec | undefined>;
  remove(sessionId: string): Promise<void>;
  list(): Promise<SandboxSpec[]>;
}

/** The runners inside the sandboxes, as the lifecycle sees them (`RunnerPool`). */
/** What a sandbox's runner counts: the workspace's files and the user's processes. */
export interface RunnerStats {
  filesCount: number;
  activeProcesses: number;
}

export interface Runners {
  /**
   * Starts the session's runner (and waits for its answer); `settled`: until what it starts
   * ahead of runs is warm too (a pool member, frozen next, keeps no start-up for its claim).
   */
  warmUp(sessionId: string, containerId: string, options?: { settled?: boolean }): Promise<void>;
  stats(sessionId: string, containerId: string): Promise<RunnerStats>;
  /** The container's stats as its runner last gave them (a frozen runner cannot answer). */
  lastStats(containerId: string): RunnerStats | undefined;
  /** Forgets the session's runner (its container is going or was replaced). */
  /** Ends the session's runner connection: its runs under way fail with `reason`. */
  close(sessionId: string, reason?: AppError): void;
  /** The runner started for pool slot `from` now serves session `to`. */
  adopt(from: string, to: string): void;
}

/** A sandbox of the warm pool: running, its runner answering, its workspace empty. */
export interface PoolMember {
  /** The name its container and workspace have until a session claims it. */
  slot: string;
  containerId: string;
  /** What it was started with (a claim may change memory, CPU and processes). */
  limits: SandboxLimits;
  /** Frozen while it waited (it costs no CPU then): the claim thaws it. */
  frozen?: boolean;
  /**
   * Frozen through its cgroup by the agent, not by `docker pause` (Docker sees it running):
   * thawed by a write to this file, and before any removal.
   */
  freezer?: CgroupFreezer;
}

/** Sandboxes made ahead of demand (`WarmPool`). */
export interface SandboxPool {
  /** A ready member with `limits`' disk size, out of the pool; undefined when none is ready. */
  take(limits: SandboxLimits): PoolMember | undefined;
  /** Gives the member's workspace to the session (which must have none). */
  adoptWorkspace(member: PoolMember, sessionId: string): Promise<void>;
  /** Removes a member that could not be given to a session: its container and workspace. */
  discard(member: PoolMember): Promise<void>;
  /** Runs a create that the pool could not serve: refills wait while one runs. */
  cold<T>(work: () => Promise<T>): Promise<T>;
}

/** A sandbox's place on the network: its address, and a pid in its network namespace. */
export interface SandboxAddress {
  ip: string;
  pid: number;
}

/** The egress policies of the node's sandboxes, as the lifecycle sees them (`SessionEgress`). */
export interface EgressRules {
  /** Holds the sandbox at `address` to `policy`. */
  apply(sessionId: string, address: SandboxAddress, policy: EgressPolicy): Promise<void>;
  /** The same for several sandboxes, in one change. */
  applyAll(
    entries: ReadonlyArray<{ sessionId: string; address: SandboxAddress; policy: EgressPolicy }>,
  ): Promise<void>;
  /** Whether the node holds anything for the session (a policy, or its address). */
  holds(sessionId: string): boolean;
  /** How many sessions the node holds to a policy. */
  count(): number;
  /** Forgets a session whose sandbox is gone. */
  forget(sessionId: string): Promise<void>;
}

/** The collaborators of the sandbox lifecycle: narrow interfaces, so that it runs on doubles. */
export interface LifecycleDeps {
  containers: ContainerClient;
  workspaces: WorkspaceStore;
  blobs: SavedWorkspaces;
  specs: SpecStore;
  runners: Runners;
  /** Absent when the node keeps no warm pool. */
  pool?: SandboxPool | undefined;
  /** Admission of the creates the pool cannot serve; absent: every one starts at once. */
  coldStarts?: Admission | undefined;
  /** Admission of run starts; absent: every run starts at once. */
  runStarts?: Admission | undefined;
  locks: SessionLocks;
  egress: EgressRules;
  logger: Logger;
  config: ContainerConfig;
  /** CPUs of this host: Docker refuses a container more. */
  hostCpus: number;
}
