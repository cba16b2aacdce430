import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { containerSpec, poolLabels } from '../docker/container-spec';
import {
  containerName,
  isPoolSlot,
  POOL_SLOT_PREFIX,
  sandboxLabelKeys,
  slotOfContainerName,
} from '../docker/docker-names';
import type { PoolMember, SandboxPool } from '../lifecycle/lifecycle-deps';
import type { PoolRefill, PoolStatus, SandboxLimits } from '../sandbox-runtime';
import {
  DEMAND_HOLD_MS,
  DEMAND_WINDOW_MS,
  limitsOf,
  newUse,
  sameShape,
  shapeKey,
  type PoolShape,
  type ShapeUse,
} from './pool-shapes';
import { thaw } from '../docker/cgroup-freezer';
import { freezeMember, thawLeftover } from './member-freezer';
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
 * the node serves requests. Members are never reused: a session's sandbox is never anyone
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
  private readonly uses = new Map<string, ShapeUse>();
  /** How long the last member took to make (ms), and all of them together. */
  private refill: PoolRefill = { lastMs: 0, totalMs: 0, made: 0 };
  private readonly now: () => number;

  constructor(private readonly deps: WarmPoolDeps) {
    this.now = deps.now ?? Date.now;
    for (const shape of deps.shapes) {
      this.uses.set(shapeKey(shape), newUse());
    }
  }

  /** Removes what an earlier run of the agent left in the pool, then starts filling it. */
  async start(): Promise<void> {
    this.exactShapes = await this.deps.containers.ownKernel(this.deps.config.sandboxRuntime);
    await this.removeLeftovers();
    this.fill();
  }

  /** Stops refilling and removes the ready members. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.filling;
    await Promise.all(this.ready.splice(0).map((member) => this.discardQuietly(member)));
  }

  /** Resolves when the pool is not making members (full, stopped, or waiting for a cold create). */
  async settled(): Promise<void> {
    while (this.filling !== undefined) await this.filling;
  }

  status(): PoolStatus[] {
    return this.deps.shapes.map((shape) => {
      const use = this.useOf(shape);
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
    const use = this.demandFor(limits);
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

  private useOf(shape: PoolShape): ShapeUse {
    const key = shapeKey(shape);
    let use = this.uses.get(key);
    if (use === undefined) this.uses.set(key, (use = newUse()));
    return use;
  }

  private readyOf(shape: PoolShape): Member[] {
    return this.ready.filter(
      (m) => m.limits.diskMb === shape.diskMb && sameShape(m.limits, limitsOf(shape)),
    );
  }

  /** Records a create asking for `limits` against the shape that serves it, if one does. */
  private demandFor(limits: SandboxLimits): ShapeUse | undefined {
    const { shapes } = this.deps;
    const shape =
      shapes.find((s) => s.diskMb === limits.diskMb && sameShape(limitsOf(s), limits)) ??
      (this.exactShapes ? undefined : shapes.find((s) => s.diskMb === limits.diskMb));
    if (shape === undefined) return undefined;
    const use = this.useOf(shape);
    use.takes.push(this.now());
    return use;
  }

  /**
   * The demand of the shape: its creates in the demand window, or the highest such count of
   * the last `demandHoldMs` when more.
   */
  private demand(shape: PoolShape): number {
    const use = this.useOf(shape);
    const now = this.now();
    const since = now - (this.deps.demandWindowMs ?? DEMAND_WINDOW_MS);
    while (use.takes.length > 0 && (use.takes[0] as number) < since) use.takes.shift();
    const recent = use.takes.length;
    if (recent >= use.peak || now - use.peakAt > (this.deps.demandHoldMs ?? DEMAND_HOLD_MS)) {
      use.peak = recent;
      use.peakAt = now;
    }
    return use.peak;
  }

  /**
   * How many members of `shape` the pool keeps now: its size, or its demand when more, within
   * the budget the other shapes leave (each holding its size, or what it has ready if more).
   */
  private target(shape: PoolShape): number {
    const { shapes, maxMembers = Infinity } = this.deps;
    const others = shapes.reduce(
      (sum, s) => (s === shape ? sum : sum + Math.max(s.size, this.readyOf(s).length)),
      0,
    );
    const room = Math.max(shape.size, maxMembers - others);
    return Math.max(shape.size, Math.min(this.demand(shape), room));
  }

  /** Removes the members above each shape's target (demand has fallen since they were made). */
  private async trim(): Promise<void> {
    for (const shape of this.deps.shapes) {
      const extra = this.readyOf(shape).slice(this.target(shape));
      for (const member of extra) {
        const index = this.ready.indexOf(member);
        if (index < 0) continue;
        this.ready.splice(index, 1);
        await this.discardQuietly(member);
      }
      if (extra.length > 0) {
        this.deps.logger.info({ shape: shapeKey(shape), removed: extra.length }, 'pool shrunk');
      }
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

  /**
   * Members of an earlier run (the agent stopped or crashed) are not trusted: their containers
   * and workspaces are removed. A claimed member has the session's name and is left alone.
   */
  private async removeLeftovers(): Promise<void> {
    const { containers, workspaces, config, logger } = this.deps;
    const labels = sandboxLabelKeys(config.labelPrefix);
    const leftovers: string[] = [];
    for (const container of await containers.listByLabel(labels.node, config.nodeId)) {
      const slot = slotOfContainerName(container.name);
      if (slot === undefined || !isPoolSlot(slot)) continue;
      await thawLeftover(this.deps, container.id);
      await containers.remove(container.id);
      leftovers.push(slot);
    }
    for (const slot of await workspaces.slots()) {
      if (!isPoolSlot(slot)) continue;
      await workspaces.destroy(slot);
      if (!leftovers.includes(slot)) leftovers.push(slot);
    }
    if (leftovers.length > 0) logger.info({ slots: leftovers }, 'removed old pool members');
  }
}
