import { createInterface } from 'node:readline';
import type { Logger } from '@sandbox/logger';
import type {
  ContainerClient,
  ContainerCreateOptions,
  ContainerLimits,
  ContainerState,
} from './container-client';
import { ForwardingContainers } from './forwarding-containers';

/** Docker's container events that change what `find` answers (exec_* and the like do not). */
const STATE_CHANGES = new Set([
  'create',
  'start',
  'restart',
  'stop',
  'die',
  'kill',
  'oom',
  'pause',
  'unpause',
  'rename',
  'update',
  'destroy',
]);

/** Docker's container events after which a container no longer runs (or exists). */
const ENDINGS = new Set(['die', 'destroy']);

/** One line of Docker's event stream, as far as the cache reads it. */
interface DockerEvent {
  Type?: string;
  Action?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
}

/**
 * A copy of a container's state that shares nothing with it (its two maps are of strings):
 * what `find` hands out, so that no caller changes what the cache keeps. Not `structuredClone`,
 * which serializes and parses it: most of the cache's cost, once per run.
 */
export function copyOf(state: ContainerState): ContainerState {
  return { ...state, addresses: { ...state.addresses }, labels: { ...state.labels } };
}

/** Opens Docker's event stream of this node's containers. */
export type EventSource = () => Promise<NodeJS.ReadableStream>;

/** How long to wait before reopening a broken event stream (doubling up to 16×). */
const RECONNECT_MS = 250;

/**
 * The runtime's Docker calls, with `find` answered from memory while Docker's event stream is
 * open: the agent's own changes and every state change Docker reports (a container that died,
 * was killed or removed behind the agent's back) forget what was known. With no event stream
 * (not started, broken, reconnecting), every `find` asks Docker, as before.
 */
export class CachedContainers extends ForwardingContainers {
  private readonly known = new Map<string, ContainerState>();
  /** Bumped by every change: a lookup that raced a change does not store what it read. */
  private generation = 0;
  private live = false;
  private stopped = true;
  private stream: NodeJS.ReadableStream | undefined;
  private failures = 0;
  private reconnect: NodeJS.Timeout | undefined;
  /** Whether the stream was open once and lost since: events were missed. */
  private missedEvents = false;
  private readonly endedListeners: ((containerId: string) => void)[] = [];
  private readonly resumedListeners: (() => void)[] = [];

  constructor(
    inner: ContainerClient,
    private readonly events: EventSource,
    private readonly logger: Logger,
  ) {
    super(inner);
  }

  /** Opens the event stream; until it is open, nothing is cached. */
  async watch(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  unwatch(): void {
    this.stopped = true;
    clearTimeout(this.reconnect);
    this.goBlind();
    (this.stream as { destroy?: () => void } | undefined)?.destroy?.();
    this.stream = undefined;
  }

  /** Calls `listener` with the id of each container Docker reports died or removed. */
  onEnded(listener: (containerId: string) => void): void {
    this.endedListeners.push(listener);
  }

  /**
   * Calls `listener` each time the event stream opens again after it was lost (dockerd
   * restarted, say): whatever happened to the containers meanwhile was not reported.
   */
  onResumed(listener: () => void): void {
    this.resumedListeners.push(listener);
  }

  /** Whether answers may come from memory (the event stream is open). */
  get caching(): boolean {
    return this.live;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    try {
      const stream = await this.events();
      if (this.stopped) {
        (stream as { destroy?: () => void }).destroy?.();
        return;
      }
      this.stream = stream;
      this.failures = 0;
      this.live = true;
      if (this.missedEvents) {
        this.missedEvents = false;
        for (const listener of this.resumedListeners) listener();
      }
      const lines = createInterface({ input: stream });
      lines.on('line', (line) => this.onEvent(line));
      let gone = false;
      const lost = () => {
        if (gone) return;
        gone = true;
        lines.removeAllListeners('line');
        lines.close();
        if (this.stream !== stream) return;
        this.stream = undefined;
        this.missedEvents = true;
        this.goBlind();
        this.scheduleReconnect();
      };
      stream.once('end', lost);
      stream.once('close', lost);
      // An aborted response (dockerd going away) errors the stream, and readline passes the
      // error on: unheard, it would end the agent.
      stream.on('error', lost);
      lines.on('error', lost);
    } catch (err) {
      this.logger.warn({ err }, 'docker event stream unavailable; not caching container state');
      this.scheduleReconnect();
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.failures += 1;
    const delay = RECONNECT_MS * 2 ** Math.min(this.failures - 1, 4);
    this.reconnect = setTimeout(() => void this.connect(), delay);
    this.reconnect.unref();
  }

  /** Stops answering from memory and forgets everything. */
  private goBlind(): void {
    this.live = false;
    this.generation += 1;
    this.known.clear();
  }

  private onEvent(line: string): void {
    let event: DockerEvent;
    try {
      event = JSON.parse(line) as DockerEvent;
    } catch {
      return;
    }
    if (event.Type !== 'container' || !STATE_CHANGES.has(event.Action ?? '')) return;
    this.forget(event.Actor?.ID ?? '');
    const name = event.Actor?.Attributes?.name;
    if (name !== undefined) this.forget(name);
    // A rename's event carries the old name too.
    const oldName = event.Actor?.Attributes?.oldName;
    if (oldName !== undefined) this.forget(oldName.replace(/^\//, ''));
    const id = event.Actor?.ID;
    if (ENDINGS.has(event.Action ?? '') && id !== undefined) {
      for (const listener of this.endedListeners) listener(id);
    }
  }

  /** Forgets a container, named by name or id. */
  private forget(container: string): void {
    this.generation += 1;
    if (container === '') return;
    this.known.delete(container);
    for (const [key, state] of this.known) {
      if (state.id === container || state.id.startsWith(container)) this.known.delete(key);
    }
  }

  override async find(container: string): Promise<ContainerState | undefined> {
    const cached = this.live ? this.known.get(container) : undefined;
    if (cached !== undefined) return copyOf(cached);
    const generation = this.generation;
    const state = await this.inner.find(container);
    if (state !== undefined && this.live && generation === this.generation) {
      this.known.set(container, copyOf(state));
    }
    return state;
  }

  /** A change by the agent itself: forgotten before and after, so no lookup keeps the old. */
  private async changing<T>(containers: string[], work: () => Promise<T>): Promise<T> {
    for (const container of containers) this.forget(container);
    try {
      return await work();
    } finally {
      for (const container of containers) this.forget(container);
    }
  }

  override createAndStart(options: ContainerCreateOptions): Promise<string> {
    return this.changing([options.name ?? ''], () => this.inner.createAndStart(options));
  }

  override remove(container: string): Promise<boolean> {
    return this.changing([container], () => this.inner.remove(container));
  }

  override disconnect(container: string, network: string): Promise<boolean> {
    return this.changing([container], () => this.inner.disconnect(container, network));
  }

  override rename(container: string, name: string): Promise<void> {
    return this.changing([container, name], () => this.inner.rename(container, name));
  }

  override updateLimits(container: string, limits: ContainerLimits): Promise<void> {
    return this.changing([container], () => this.inner.updateLimits(container, limits));
  }

  override pause(container: string): Promise<void> {
    return this.changing([container], () => this.inner.pause(container));
  }

  override unpause(container: string): Promise<void> {
    return this.changing([container], () => this.inner.unpause(container));
  }

  override start(container: string): Promise<void> {
    return this.changing([container], () => this.inner.start(container));
  }
}
