import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { containerSpec, poolLabels } from '../docker/container-spec';
import { containerName, POOL_SLOT_PREFIX } from '../docker/docker-names';
import type { PoolMember, SandboxPool } from '../lifecycle/lifecycle-deps';
import type { PoolRefill, PoolStatus, SandboxLimits } from '../sandbox-runtime';
import { thaw } from '../docker/cgroup-freezer';
import { IdleFill } from './idle-fill';
import { PoolDemand } from './pool-demand';
import { limitsOf, sameShape, shapeKey, type PoolShape } from './pool-shapes';
import { removeLeftovers } from './leftovers';
import { freezeMember } from './member-freezer';
import { refillMoment } from './refill-moment';
import type { WarmPoolDeps } from './warm-pool-deps';

/** A ready member, and the user mapping its disk was made for. */
type Member = PoolMember & { mapping: string | undefined };

/**
 * Sandboxes made ahead of demand: each a container with its workspace, network and warmed
 * runner, named by a pool slot until a session claims it, and frozen while it waits (no CPU).
 * Each shape keeps its `size`, and grows to as many as the creates of its last minute, within
 * the node's budget (`maxMembers`); members above that go at the next `prune`. Refills in the
 * background, one member at a time, only while no create the pool could not serve is running
 * (the pool never competes with a caller waiting for a sandbox), and at a slower pace while
 * the node serves requests. In idle time it grows further, towards a share of the node's
 * memory, and gives those members back when memory runs low (`IdleFill`, ADR 46). Members are
 * never reused: a session's sandbox is never anyone
 * else's, before or after.
 */
export class WarmPool implements SandboxPool {
  private readonly ready: Member[] = [];
  /** Creates running the slow way. */
  private colds = 0;
  private filling: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  private failures = 0;
  /** Members out of the pool whose removal failed (dockerd was down, say): retried by `prune`. */
  private readonly strays: PoolMember[] = [];

  /** Members serve only their own shape: gVisor cannot change a running sandbox's limits. */
  private exactShapes = false;
  private readonly demands: PoolDemand;
  /** How long the last member took to make (ms), and all of them together. */
  private refill: PoolRefill = { lastMs: 0, totalMs: 0, made: 0 };
  private readonly now: () => number;
  private readonly idle: IdleFill | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private looking = false;

  constructor(private readonly deps: WarmPoolDeps) {
    this.now = deps.now ?? Date.now;
    const fill = deps.idleFill;
    this.idle =
      fill === undefined || fill.members <= 0 ? undefined : new IdleFill(fill, deps.quietFor);
    const { demandWindowMs, demandHoldMs } = deps;
    this.demands = new PoolDemand(deps.shapes, this.now, demandWindowMs, demandHoldMs);
  }

  /** Removes what an earlier run of the agent left in the pool, then starts filling it. */
  async start(): Promise<void> {
    this.exactShapes = await this.deps.containers.ownKernel(this.deps.config.sandboxRuntime);
    await removeLeftovers(this.deps);
    this.fill();
    if (this.idle !== undefined) {
      const every = this.deps.idleLookMs ?? 1000;
      this.idleTimer = setInterval(() => void this.lookIdle(), every).unref();
    }
  }

  /** Stops refilling and removes the ready members. */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.idleTimer);
    await this.filling;
    await Promise.all(this.ready.splice(0).map((member) => this.discardQuietly(member)));
  }

  /** Resolves when the pool is not making members (full, stopped, or waiting for a cold create). */
  async settled(): Promise<void> {
    while (this.filling !== undefined) await this.filling;
  }

  status(): PoolStatus[] {
    return this.deps.shapes.map((shape) => {
      const use = this.demands.useOf(shape);
      return {
        ...shape,
        ready: this.readyOf(shape).length,
        target: this.target(shape),
        hits: use.hits,
        misses: use.misses,
      };
    });
  }

  /** How long making members took: the last one, and all of them (`/metrics`). */
  refillTimes(): PoolRefill {
    return { ...this.refill };
  }

  take(limits: SandboxLimits): PoolMember | undefined {
    this.dropStale();
    const fits = (m: PoolMember) => m.limits.diskMb === limits.diskMb;
    let index = this.ready.findIndex((m) => fits(m) && sameShape(m.limits, limits));
    if (index < 0 && !this.exactShapes) index = this.ready.findIndex(fits);
    const use = this.demands.record(limits, this.exactShapes);
    if (index < 0) {
      if (use !== undefined) use.misses += 1;
      this.fill();
      return undefined;
    }
    if (use !== undefined) use.hits += 1;
    const [member] = this.ready.splice(index, 1) as [Member];
    this.fill();
    return {
      slot: member.slot,
      containerId: member.containerId,
      limits: member.limits,
      ...(member.frozen === true ? { frozen: true } : {}),
      ...(member.freezer === undefined ? {} : { freezer: member.freezer }),
    };
  }

  adoptWorkspace(member: PoolMember, sessionId: string): Promise<void> {
    return this.deps.workspaces.adopt(member.slot, sessionId);
  }

  async discard(member: PoolMember): Promise<void> {
    this.deps.runners.close(member.slot);
    // Frozen behind Docker's back: its processes would not die of the removal's SIGKILL.
    if (member.freezer !== undefined) await thaw(member.freezer).catch(() => undefined);
    await this.deps.containers.remove(member.containerId);
    await this.deps.workspaces.destroy(member.slot);
  }

  async cold<T>(work: () => Promise<T>): Promise<T> {
    this.colds += 1;
    try {
      return await work();
    } finally {
      this.colds -= 1;
      this.fill();
    }
  }

  /** Drops the member whose container Docker reported died or removed, if one is ready. */
  dropEnded(containerId: string): void {
    const index = this.ready.findIndex(
      (m) => m.containerId.startsWith(containerId) || containerId.startsWith(m.containerId),
    );
    if (index < 0) return;
    const [member] = this.ready.splice(index, 1) as [Member];
    this.deps.logger.warn({ slot: member.slot }, 'a pool member stopped: replacing it');
    void this.discardQuietly(member);
    this.fill();
  }

  /**
   * Drops members whose container stopped or vanished (checked by the agent's reconcile), and
   * removes those whose removal failed before.
   */
  async prune(): Promise<void> {
    await this.removeStrays();
    this.dropStale();
    await this.trim();
    for (const member of [...this.ready]) {
      const state = await this.deps.containers.find(member.containerId);
      // Docker sees a member frozen through its cgroup running, not paused.
      const paused = member.frozen === true && member.freezer === undefined;
      if (state?.running === true && state.paused === paused) continue;
      const index = this.ready.indexOf(member);
      if (index < 0) continue; // claimed meanwhile
      this.ready.splice(index, 1);
      this.deps.logger.warn({ slot: member.slot }, 'a pool member stopped: replacing it');
      await this.discardQuietly(member);
    }
    this.fill();
  }

  /** Drops the members made for a user mapping the engine no longer has. */
  private dropStale(): void {
    const now = this.deps.mapping?.();
    const stale = this.ready.filter((m) => m.mapping !== now);
    for (const member of stale) {
      this.ready.splice(this.ready.indexOf(member), 1);
      this.deps.logger.warn(
        { slot: member.slot, madeFor: member.mapping, now },
        "a pool member was made for the engine's former user mapping: replacing it",
      );
      void this.discardQuietly(member);
    }
    if (stale.length > 0) this.fill();
  }

  private readyOf(shape: PoolShape): Member[] {
    return this.ready.filter(
      (m) => m.limits.diskMb === shape.diskMb && sameShape(m.limits, limitsOf(shape)),
    );
  }

  /**
   * How many members of `shape` its creates ask for: its size, or its demand when more, within
   * the budget the other shapes leave (each holding its size, or what it has ready if more).
   */
  private demandTarget(shape: PoolShape): number {
    const { shapes, maxMembers = Infinity } = this.deps;
    const others = shapes.reduce(
      (sum, s) => (s === shape ? sum : sum + Math.max(s.size, this.readyOf(s).length)),
      0,
    );
    const room = Math.max(shape.size, maxMembers - others);
    return Math.max(shape.size, Math.min(this.demands.of(shape), room));
  }

  /**
   * How many members of `shape` the pool makes now: what its creates ask for, or, while the
   * node is idle with memory to spare, its share of the idle budget when more (ADR 46).
   */
  private target(shape: PoolShape): number {
    const demand = this.demandTarget(shape);
    if (this.idle?.growing() !== true) return demand;
    return Math.max(demand, this.idle.share(shape, this.deps.shapes));
  }

  /** How many members of `shape` the pool keeps: those made in idle time too, unless memory is low. */
  private kept(shape: PoolShape): number {
    const demand = this.demandTarget(shape);
    if (this.idle?.keeping() !== true) return demand;
    return Math.max(demand, this.idle.share(shape, this.deps.shapes));
  }

  /** Removes the members above what each shape keeps (demand has fallen since they were made). */
  private async trim(): Promise<void> {
    for (const shape of this.deps.shapes) {
      const removed = await this.removeAbove(shape, this.kept(shape), Infinity);
      if (removed > 0) {
        this.deps.logger.info({ shape: shapeKey(shape), removed }, 'pool shrunk');
      }
    }
  }

  /** Removes ready members of `shape` past the first `keep`, `limit` at most; how many went. */
  private async removeAbove(shape: PoolShape, keep: number, limit: number): Promise<number> {
    let removed = 0;
    for (const member of this.readyOf(shape).slice(keep)) {
      if (removed >= limit) break;
      const index = this.ready.indexOf(member);
      if (index < 0) continue; // claimed meanwhile
      this.ready.splice(index, 1);
      removed += 1;
      await this.discardQuietly(member);
    }
    return removed;
  }

  /**
   * The idle fill's look at the node, every `idleLookMs`: with memory low, gives back members
   * made in idle time (down to what the creates ask for); else lets the pool grow if idle.
   */
  private async lookIdle(): Promise<void> {
    if (this.idle === undefined || this.looking || this.stopping.signal.aborted) return;
    this.looking = true;
    try {
      const { giveBack } = await this.idle.look();
      let removed = 0;
      for (const shape of this.deps.shapes) {
        if (removed >= giveBack) break;
        removed += await this.removeAbove(shape, this.demandTarget(shape), giveBack - removed);
      }
      if (removed > 0) {
        this.deps.logger.warn({ removed }, 'memory is low: the pool gave back members');
      }
      this.fill();
    } catch (err) {
      this.deps.logger.warn({ err }, "the pool's idle fill could not read the node's memory");
    } finally {
      this.looking = false;
    }
  }

  /** The shape that lacks members most (counting the one being made), if any does. */
  private nextShape(): PoolShape | undefined {
    let best: { shape: PoolShape; missing: number } | undefined;
    for (const status of this.status()) {
      const missing = status.target - status.ready;
      if (missing > 0 && (best === undefined || missing > best.missing)) {
        best = { shape: status, missing };
      }
    }
    return best?.shape;
  }

  private fill(): void {
    if (this.filling !== undefined || this.stopping.signal.aborted || this.colds > 0) return;
    if (this.nextShape() === undefined) return;
    this.filling = this.fillUntilFull().finally(() => {
      this.filling = undefined;
      // A claim or a cold create may have ended while this pass was finishing.
      this.fill();
    });
  }

  private async fillUntilFull(): Promise<void> {
    for (;;) {
      if (this.stopping.signal.aborted || this.colds > 0) return;
      if (this.nextShape() === undefined) return;
      await refillMoment(this.deps, () => this.low(), this.stopping.signal);
      const shape = this.nextShape();
      if (shape === undefined) return;
      if (this.stopping.signal.aborted || this.colds > 0) return;
      await this.removeStrays();
      try {
        const member = await this.make(shape);
        if (this.stopping.signal.aborted) {
          await this.discardQuietly(member);
          return;
        }
        this.ready.push(member);
        this.failures = 0;
      } catch (err) {
        this.failures += 1;
        this.deps.logger.error({ err, failures: this.failures }, 'could not make a pool member');
        const delay = (this.deps.retryDelayMs ?? 1000) * 2 ** Math.min(this.failures - 1, 5);
        await sleep(delay, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }

  /** Whether a shape has less than a quarter of its target ready (at least one missing). */
  private low(): boolean {
    return this.status().some(
      (status) => status.ready < status.target && status.ready < Math.ceil(status.target / 4),
    );
  }

  private async make(shape: PoolShape): Promise<Member> {
    const { containers, workspaces, runners, config, mapping } = this.deps;
    const madeFor = mapping?.();
    const slot = `${POOL_SLOT_PREFIX}${randomBytes(6).toString('hex')}`;
    const limits = limitsOf(shape);
    const labels = poolLabels(config);
    const startedAt = this.now();
    try {
      const bind = await workspaces.create(slot, shape.diskMb, labels);
      const spec = { sessionId: slot, accountId: '', limits };
      const containerId = await containers.createAndStart(
        containerSpec(spec, config, bind, labels),
      );
      // Waiting costs it no CPU: a claim thaws it (claimPooled). Frozen only once its runner's
      // start-up is done, which the claim's session would pay otherwise, after its create.
      const frozen = this.deps.freeze ?? true;
      await runners.warmUp(slot, containerId, { settled: frozen });
      const freezer = frozen
        ? await freezeMember(this.deps, containerId, this.exactShapes)
        : undefined;
      // Learned anew while it was made: its disk may have either mapping.
      if (mapping?.() !== madeFor) throw new Error("the engine's user mapping changed");
      const tookMs = this.now() - startedAt;
      this.refill = {
        lastMs: tookMs,
        totalMs: this.refill.totalMs + tookMs,
        made: this.refill.made + 1,
      };
      this.deps.onMemberMade?.(tookMs);
      const member: Member = { slot, containerId, limits, mapping: madeFor };
      if (frozen) Object.assign(member, freezer === undefined ? { frozen } : { frozen, freezer });
      return member;
    } catch (err) {
      // Docker going away in the middle (a restart) can fail the clean-up too: then it is a
      // stray, removed before the next member is made.
      await this.discardQuietly({ slot, containerId: containerName(slot), limits });
      throw err;
    }
  }

  /** Tries again to remove what could not be removed before. */
  private async removeStrays(): Promise<void> {
    for (const stray of this.strays.splice(0)) await this.discardQuietly(stray);
  }

  private async discardQuietly(member: PoolMember): Promise<void> {
    await this.discard(member).catch((err: unknown) => {
      this.deps.logger.error({ err, slot: member.slot }, 'pool member removal failed; will retry');
      this.strays.push(member);
    });
  }
}
