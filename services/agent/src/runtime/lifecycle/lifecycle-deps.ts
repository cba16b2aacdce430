import type { Logger } from '@sandbox/logger';
import type { ContainerClient } from '../docker/container-client';
import type { ContainerConfig } from '../docker/container-spec';
import type { SessionLocks } from '../locks/session-locks';
import type { SandboxSpec } from '../sandbox-runtime';
import type { ArchiveManifest } from '../storage/blob-store';
import type { WorkspaceStore } from '../storage/workspaces';

/** Saved workspaces of deep-sleeping sessions (`BlobStore`). */
export interface SavedWorkspaces {
  manifest(sessionId: string): Promise<ArchiveManifest | undefined>;
  /** Archives `source` (a workspace on the host) and verifies what was stored. */
  save(sessionId: string, source: string): Promise<ArchiveManifest>;
  /** Unpacks the saved workspace into `target`. */
  restore(sessionId: string, target: string): Promise<ArchiveManifest>;
  remove(sessionId: string): Promise<void>;
}

/** What each sandbox of this node was created with (`SandboxSpecs`). */
export interface SpecStore {
  write(spec: SandboxSpec): Promise<void>;
  read(sessionId: string): Promise<SandboxSpec | undefined>;
  remove(sessionId: string): Promise<void>;
  list(): Promise<SandboxSpec[]>;
}

/** The runners inside the sandboxes, as the lifecycle sees them (`RunnerPool`). */
export interface Runners {
  /** Starts the session's runner (and waits for its answer). */
  warmUp(sessionId: string, containerId: string): Promise<void>;
  stats(
    sessionId: string,
    containerId: string,
  ): Promise<{ filesCount: number; activeProcesses: number }>;
  /** Forgets the session's runner (its container is going or was replaced). */
  close(sessionId: string): void;
}

/** The collaborators of the sandbox lifecycle: narrow interfaces, so that it runs on doubles. */
export interface LifecycleDeps {
  containers: ContainerClient;
  workspaces: WorkspaceStore;
  blobs: SavedWorkspaces;
  specs: SpecStore;
  runners: Runners;
  locks: SessionLocks;
  logger: Logger;
  config: ContainerConfig;
  /** CPUs of this host: Docker refuses a container more. */
  hostCpus: number;
}
