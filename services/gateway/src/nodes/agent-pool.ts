import type { AgentNode } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import { AgentClient } from '../agents/agent-client';
import type { NodeStatus } from '../agents/agent-messages';
import { nodeHealth, type NodeHealth } from './node-health';
import type { NodeState, NodeStore } from './node-store';
import { isSharedStore, pickNode, type Shape } from './placement';
import { newMember, type Member } from './pool-member';

export interface FleetSettings {
  token: string | undefined;
  callTimeoutMs: number;
  fileTimeoutMs: number;
  /** How often each node is asked for its status (the heartbeat) and the registry re-read. */
  heartbeatMs: number;
  /**
   * A node whose heartbeats failed this long is down: no placement, its sessions 503. A node
   * whose connection stays open while its heartbeats time out is busy, not gone: it is down
   * only after BUSY_GRACE times this long.
   */
  downAfterMs: number;
}

/** What this replica knows of a node now. */
export interface NodeLiveView {
  health: NodeHealth;
  status: NodeStatus | undefined;
  lastHeartbeatAt: Date | undefined;
}

/** A session about to wake: where, and the node it moves from when that is another. */
export interface WakeTarget {
  agent: AgentClient;
  movedFrom?: string;
}

/**
 * How long a request waits for a node seen down to answer again (`recheck`): more than the
 * longest pause between two reconnection attempts (1 s, ±20 %), so that a node that is back
 * is found; a node still down costs its requests this long before their 503.
 */
const PROBE_MS = 1500;

/**
 * How long before a node counted its sandboxes a placement there may still be missing from the
 * count: the create it starts takes that long to show in Docker's list.
 */
const COUNT_AGE_MS = 3000;

/** Every status is written to the registry at most this often per node and replica. */
const RECORD_EVERY_MS = 10_000;

/** A heartbeat that got no answer in time (not one the node refused or could not take). */
const isDeadline = (err: unknown): boolean =>
  err instanceof AppError && err.code === 'request_timeout';

const unavailable = (message: string, retryAfter: number): AppError =>
  new AppError('service_unavailable', message, { retryAfter });

/**
 * One replica's view of the fleet: the nodes of the registry (Postgres), re-read at every
 * heartbeat, each with its gRPC client and its last heartbeat's status. Placement picks the
 * least loaded healthy, active node; requests reach a session's node while it is not down.
 */
export class AgentPool {
  private readonly members = new Map<string, Member>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private nextRound: Promise<void> | undefined;
  private refreshing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly store: NodeStore,
    private readonly settings: FleetSettings,
    private readonly logger: Logger,
  ) {}

  /**
   * Registers the configured nodes (AGENT_NODES), reads the registry and waits for the first
   * heartbeats (bounded by their deadline), then keeps beating.
   */
  async start(configured: readonly AgentNode[]): Promise<void> {
    await this.store.registerConfigured(configured);
    await this.tick();
    this.timer = setInterval(() => void this.round(), this.settings.heartbeatMs);
    this.timer.unref();
  }

  /**
   * A heartbeat round that starts after this call, so it sees every registry change made
   * before it: while one is in flight, waits for it and runs the next (callers share it).
   */
  tick(): Promise<void> {
    if (this.ticking === undefined) return this.round();
    this.nextRound ??= this.ticking.then(() => {
      this.nextRound = undefined;
      return this.round();
    });
    return this.nextRound;
  }

  /** Re-reads the registry and beats every node; one round at a time. */
  private round(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.ticking ??= (async () => {
      try {
        await this.refresh();
        await Promise.all([...this.members.values()].map((member) => this.beat(member)));
      } catch (err) {
        this.logger.warn({ err }, 'reading the node registry failed');
      }
    })().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  /**
   * Brings the members in line with the registry: new nodes, new addresses, states, removals
   * (what an operator's change needs at once on this replica; heartbeats come at their time).
   * One read at a time, each after the one before: none is lost, no member made twice.
   */
  refresh(): Promise<void> {
    const next = this.refreshing.then(() => this.readRegistry());
    this.refreshing = next.catch(() => undefined);
    return next;
  }

  private async readRegistry(): Promise<void> {
    const nodes = await this.store.registry();
    if (this.closed) return;
    const seen = new Set<string>();
    for (const node of nodes) {
      seen.add(node.id);
      const member = this.members.get(node.id);
      if (member !== undefined && member.address === node.address) {
        member.state = node.state;
        continue;
      }
      member?.client.close();
      this.members.set(
        node.id,
        newMember(
          node,
          new AgentClient({
            nodeId: node.id,
            address: node.address,
            token: this.settings.token,
            callTimeoutMs: this.settings.callTimeoutMs,
            fileTimeoutMs: this.settings.fileTimeoutMs,
          }),
        ),
      );
      if (member === undefined)
        this.logger.info({ nodeId: node.id, address: node.address }, 'node joined');
    }
    for (const [id, member] of this.members) {
      if (seen.has(id)) continue;
      this.members.delete(id);
      member.client.close();
      this.logger.info({ nodeId: id }, 'node left the registry');
    }
  }

  /** One heartbeat; a probe (`recheck`) waits for a reconnection under way, up to PROBE_MS. */
  private async beat(member: Member, probe = false): Promise<void> {
    const askedAt = Date.now();
    const wasUp = this.health(member) === 'up';
    try {
      const { nodeId, status } = await member.client.nodeStatus(
        probe ? PROBE_MS : Math.min(this.settings.downAfterMs / 2, 5000),
        { waitForReady: probe },
      );
      if (nodeId !== member.id) {
        throw new Error(`the agent at ${member.address} is node "${nodeId}", not "${member.id}"`);
      }
      member.status = status;
      member.statusAskedAt = askedAt;
      member.lastOkAt = Date.now();
      // The node answers from its last reading of Docker, which says how old it is (a busy
      // dockerd makes it older): placements since a little before it are kept as pending.
      const countedAt = askedAt - status.sandboxesAgeMs;
      member.placements = member.placements.filter((at) => at >= countedAt - COUNT_AGE_MS);
      if (member.failure !== undefined)
        this.logger.info({ nodeId: member.id }, 'node answers again');
      member.failure = undefined;
      member.slow = false;
      if (member.lastOkAt - member.lastRecordedAt >= RECORD_EVERY_MS) {
        member.lastRecordedAt = member.lastOkAt;
        await this.store.recordSeen(member.id, status).catch((err: unknown) => {
          this.logger.warn({ err, nodeId: member.id }, "recording a node's status failed");
        });
      }
    } catch (err) {
      const failure = err instanceof Error ? err.message : String(err);
      // Still connected, only late: evidence of a busy node, not of a dead one.
      member.slow = isDeadline(err) && member.client.connectionReady();
      if (member.failure === undefined) {
        this.logger.warn({ nodeId: member.id, failure }, 'node heartbeat failed');
      }
      member.failure = failure;
    } finally {
      member.checked = true;
      if (wasUp && this.health(member) === 'down') {
        this.logger.error({ nodeId: member.id, failure: member.failure }, 'node is down');
      }
    }
  }

  private health(member: Member): NodeHealth {
    return nodeHealth(member, Date.now(), this.settings.downAfterMs);
  }

  /**
   * Before a request reaches a session's node, when that node was seen down or its connection
   * is between two reconnection attempts: asks the node once more (it may be back since the
   * last heartbeat, e.g. an agent restarted), waiting at most PROBE_MS for the connection;
   * requests meanwhile share the probe. A node that answers serves the request at once.
   */
  async recheck(nodeId: string): Promise<void> {
    const member = this.members.get(nodeId);
    if (member === undefined) return;
    if (this.health(member) !== 'down' && member.client.connectionSettled()) return;
    await this.probe(member);
  }

  /** Asks a node once, now; requests meanwhile share the probe. */
  private probe(member: Member): Promise<void> {
    member.probing ??= this.beat(member, true).finally(() => {
      member.probing = undefined;
    });
    return member.probing;
  }

  /**
   * `place`, and when no node is up to take the sandbox, each active node not up is asked once
   * more first (at most PROBE_MS, probes shared): a node back since its last heartbeat takes
   * this create at once, as it serves its sessions' requests (`recheck`), rather than after
   * the next heartbeat.
   */
  async placeNow(shape: Shape, store?: string): Promise<AgentClient> {
    try {
      return this.place(shape, store);
    } catch (err) {
      const notUp = [...this.members.values()].filter(
        (member) => member.state === 'active' && this.health(member) !== 'up',
      );
      if (notUp.length === 0) throw err;
      await Promise.all(notUp.map((member) => this.probe(member)));
      return this.place(shape, store);
    }
  }

  /** The client of the node that holds a session; 503 while the node is down or unknown. */
  forNode(nodeId: string): AgentClient {
    const member = this.members.get(nodeId);
    if (member === undefined) {
      throw unavailable('The node of this session is not available', 30);
    }
    if (this.health(member) === 'down') {
      throw unavailable(
        'The node of this session does not answer; try again later',
        Math.ceil(this.settings.downAfterMs / 1000),
      );
    }
    return member.client;
  }

  /**
   * A node for a new sandbox of `shape`: the least loaded active, healthy node that can take
   * it (and, for a wake, that names the store holding the workspace); 503 when none can.
   */
  private place(shape: Shape, store?: string): AgentClient {
    const now = Date.now();
    const candidates = [...this.members.values()]
      .filter(
        (member) =>
          member.state === 'active' &&
          this.health(member) === 'up' &&
          member.status !== undefined &&
          (store === undefined || member.status.blobStore === store),
      )
      .map((member) => ({
        nodeId: member.id,
        status: member.status as NodeStatus,
        pending: member.placements.length,
        member,
      }));
    const chosen = pickNode(candidates, shape);
    if (chosen === undefined) {
      throw unavailable(
        candidates.length === 0
          ? 'No execution node can take a session now'
          : 'Every execution node is full',
        10,
      );
    }
    chosen.member.placements.push(now);
    return chosen.member.client;
  }

  /**
   * Where a deep-sleeping session wakes: on its node while that node is neither draining nor
   * down; else, once its workspace is confirmed saved in a shared store, on another node
   * naming that store. Otherwise 503 (it is on its way off a draining node, or its node is
   * down and only that node has its workspace).
   */
  async wakeTarget(
    session: { nodeId: string; savedIn: string | null; sleepConfirmed: boolean },
    shape: Shape,
  ): Promise<WakeTarget> {
    const member = this.members.get(session.nodeId);
    if (member !== undefined && member.state !== 'draining' && this.health(member) !== 'down') {
      return { agent: member.client };
    }
    if (session.sleepConfirmed && isSharedStore(session.savedIn)) {
      return {
        agent: await this.placeNow(shape, session.savedIn ?? undefined),
        movedFrom: session.nodeId,
      };
    }
    if (member?.state === 'draining' && this.health(member) !== 'down') {
      throw unavailable('The session is moving to another node; try again in a moment', 2);
    }
    return { agent: this.forNode(session.nodeId) };
  }

  /**
   * Who removes a deleted session's sandbox and saved workspace: its node; for a sleeper
   * whose node left the registry, any node that answers naming its (shared) store.
   */
  forDestroy(nodeId: string, savedIn: string | null | undefined): AgentClient {
    if (this.members.has(nodeId) || !isSharedStore(savedIn)) return this.forNode(nodeId);
    const other = [...this.members.values()].find(
      (member) => this.health(member) === 'up' && member.status?.blobStore === savedIn,
    );
    if (other === undefined) throw unavailable('No node can reach the saved workspace', 30);
    return other.client;
  }

  /**
   * Who reaches a stored object (a snapshot's blob): its node while up; for a shared store, any
   * node that answers naming it.
   */
  forStored(nodeId: string, storedIn: string): AgentClient {
    const own = this.members.get(nodeId);
    if (!isSharedStore(storedIn) || (own !== undefined && this.health(own) === 'up')) {
      return this.forNode(nodeId);
    }
    return this.forDestroy('', storedIn);
  }

  /** The draining nodes that answer, with their clients, for the drain. */
  draining(): Array<{ nodeId: string; agent: AgentClient }> {
    return [...this.members.values()]
      .filter((member) => member.state === 'draining' && this.health(member) === 'up')
      .map((member) => ({ nodeId: member.id, agent: member.client }));
  }

  /** Every node of the registry as this replica sees it now (for the metrics). */
  snapshot(): Array<{ nodeId: string; state: NodeState; health: NodeHealth; status?: NodeStatus }> {
    return [...this.members.values()].map((member) => ({
      nodeId: member.id,
      state: member.state,
      health: this.health(member),
      ...(member.status === undefined ? {} : { status: member.status }),
    }));
  }

  /** This replica's live view of a node (undefined: not in the registry it read last). */
  live(nodeId: string): NodeLiveView | undefined {
    const member = this.members.get(nodeId);
    if (member === undefined) return undefined;
    return {
      health: this.health(member),
      status: member.status,
      lastHeartbeatAt: member.lastOkAt === undefined ? undefined : new Date(member.lastOkAt),
    };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    for (const member of this.members.values()) member.client.close();
  }
}
