import type { CgroupFreezer } from '../docker/cgroup-freezer';
import type { Logger } from '@sandbox/logger';
import type { ContainerClient } from '../docker/container-client';
import type { ContainerConfig } from '../docker/container-spec';
import type { Runners } from '../lifecycle/lifecycle-deps';
import type { AdoptableWorkspaces } from '../storage/workspaces';
import type { IdleFillSettings } from './idle-fill';
import type { PoolShape } from './pool-shapes';

export interface WarmPoolDeps {
  containers: ContainerClient;
  workspaces: AdoptableWorkspaces;
  runners: Runners;
  config: ContainerConfig;
  logger: Logger;
  shapes: PoolShape[];
  /** Told how long each member took to make: a cold start's cost on this node now. */
  onMemberMade?: (ms: number) => void;
  /** Backoff after a member could not be made (doubles up to 32×). */
  retryDelayMs?: number;
  /** Whether the node is serving requests now: a refill waits for a quiet moment. */
  busy?: () => boolean;
  /**
   * Whether the node has served no request for `ms`. A pool that still has a quarter of its
   * target ready refills only after such a pause (`settleMs`), not in the gaps of a burst.
   */
  quietFor?: (ms: number) => boolean;
  /** The pause a refill waits for while the pool is not low (default 1.5 s). */
  settleMs?: number;
  /**
   * The longest a refill of a low pool waits for a quiet moment (default 1 s): it slows, never
   * stops.
   */
  maxDeferMs?: number;
  /**
   * The engine's user mapping as the agent knows it now (`SandboxHostIds`), which a member's
   * disk is owned by. A member made under another (dockerd restarted with a new `userns-remap`
   * before the agent learned it) is never handed out.
   */
  mapping?: () => string;
  /**
   * Members it holds at most, all shapes together (`SANDBOX_POOL_MAX`): the node's budget. A
   * shape keeps its `size` always, and grows towards the creates of its last `demandWindowMs`
   * within this budget.
   */
  maxMembers?: number;
  /** How far back creates count as demand (default 60 s). */
  demandWindowMs?: number;
  /**
   * How long the highest demand seen holds the target up (default 5 min): long enough for the
   * members it asked for to be made, one at a time, and for the next burst to find them.
   */
  demandHoldMs?: number;
  /**
   * Growth in idle time past what the creates ask for, towards a share of the node's memory,
   * given back when memory runs low (ADR 46). Without it, or with no members, none.
   */
  idleFill?: IdleFillSettings;
  /** How often the idle fill looks at the node's memory and quiet (default 1 s). */
  idleLookMs?: number;
  /** Members wait frozen (default): no CPU until a claim thaws them. */
  freeze?: boolean;
  /**
   * The freezer of a member's cgroup (by its init's pid), where the agent may write it: the
   * member is frozen and thawed through it rather than through `docker pause` (not for a
   * sandbox on a kernel of its own). Without it, or where it answers undefined, Docker's.
   */
  freezerOf?: (pid: number) => Promise<CgroupFreezer | undefined>;
  now?: () => number;
}
