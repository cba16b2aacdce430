import type {
  EgressPolicy,
  FileListing,
  FileOperation,
  FileOperationResult,
  RunResult,
  WatchEndReason,
} from '@sandbox/contract';
import { AppError } from '@sandbox/errors';
import type { EngineWatch } from './docker/engine-watch';
import { killAllInContainer } from './docker/kill-all';
import type { AdmissionStats } from './admission';
import type { DockerRuntimeParts } from './docker-runtime-parts';
import { startParts, stopParts } from './docker-runtime-start';
import { createSandbox } from './lifecycle/create-sandbox';
import {
  hibernateSandbox,
  restoreMovedLogs,
  restoreSandbox,
  type Hibernated,
} from './lifecycle/deep-sleep';
import { replaceEgress } from './lifecycle/egress';
import { requireRunning } from './lifecycle/heal';
import { pauseSandbox, resumeSandbox } from './lifecycle/pause-resume';
import { collectLeftovers, countSandboxes, reconcile } from './lifecycle/reconcile';
import { destroySandbox } from './lifecycle/remove-sandbox';
import { snapshotSandbox } from './lifecycle/snapshot-sandbox';
import { inspectSandbox } from './lifecycle/sandbox-info';
import { forkSandboxes, type ForkResult } from './forks/fork-sandboxes';
import { LimitLedger } from './runner/limit-watch';
import { KnownContexts } from './runner/known-contexts';
import { meteredExec } from './runner/metered-exec';
import { RunSlots } from './runner/run-slots';
import type { RunnerClient } from './runner/runner-client';
import * as runnerRequests from './runner/runner-requests';
import type { LogItem, OutputPosition } from './processes/process-meta';
import { stdinClosed, summaryOf, type ProcessSummary } from './processes/process-summary';
import { SessionUse } from './session-use';
import type {
  ByteSink,
  CodeContextInfo,
  ContextAction,
  RunSpec,
  FileContent,
  ListPage,
  PoolRefill,
  PoolStatus,
  SandboxInfo,
  SandboxRuntime,
  SandboxSpec,
  SnapshotTaken,
  TerminalHandle,
  TerminalSpec,
  WatchEvent,
  WatchSpec,
} from './sandbox-runtime';

/**
 * Sandboxes as hardened Docker containers, each with its own workspace: the lifecycle (under
 * each session's lock) and the data path through the sandbox's runner.
 */
export class DockerRuntime implements SandboxRuntime {
  private readonly ledger = new LimitLedger();
  /** Runs under way per session, against `maxRunsPerSession`. */
  private readonly runSlots: RunSlots;
  /** The code contexts made here, to tell a lost one from an unknown one (ADR 42). */
  private readonly contexts = new KnownContexts();
  /** The requests of each session, which its pause or deep sleep waits for. */
  private readonly use = new SessionUse();
  private renewed = false; // the pass at start recreated sandboxes of another image (ADR 47)
  /** Ends the making of spare log files ahead of need (at stop). */
  private readonly stocking = new AbortController();

  constructor(private readonly parts: DockerRuntimeParts) {
    this.runSlots = new RunSlots(parts.config.maxRunsPerSession);
  }

  async prepare(): Promise<void> {
    await startParts(this.parts, {
      containerEnded: (containerId) => this.ledger.forget(containerId),
      reconcile: () => this.reconcile(),
      stocking: this.stocking.signal,
    });
  }

  async stop(): Promise<void> {
    this.stocking.abort();
    await stopParts(this.parts);
  }

  /** The watch of the Docker engine (a wedged dockerd), started and stopped by the agent. */
  engine(): EngineWatch | undefined {
    return this.parts.engine;
  }

  poolStatus(): PoolStatus[] {
    return this.parts.pool?.status() ?? [];
  }

  poolRefill(): PoolRefill {
    return this.parts.pool?.refillTimes() ?? { lastMs: 0, totalMs: 0, made: 0 };
  }

  /** A claim from the pool answers first; the rest of it holds the session's lock (ADR 16). */
  create(
    spec: SandboxSpec,
    { deadlineAt, snapshotId }: { deadlineAt?: number; snapshotId?: string | undefined } = {},
  ): Promise<SandboxInfo> {
    // A create counts as a request: the pool refills in the quiet moments of a burst of them.
    return this.counted(() =>
      this.parts.locks.withLockAnsweringFirst(spec.sessionId, (lock, later) =>
        createSandbox(this.parts, lock, spec, true, later, deadlineAt, snapshotId),
      ),
    );
  }

  /** A use of the session (a pause or deep sleep waits for it), counted as a request. */
  snapshot(sessionId: string, snapshotId: string): Promise<SnapshotTaken> {
    return this.served(sessionId, () => snapshotSandbox(this.parts, sessionId, snapshotId));
  }

  deleteSnapshot(snapshotId: string): Promise<void> {
    return this.parts.blobs.removeSnapshot(snapshotId);
  }

  /** The admission of cold creates, as `/metrics` shows it. */
  coldStartStats(): AdmissionStats | undefined {
    return this.parts.coldStarts?.stats();
  }

  /** The admission of run starts, as `/metrics` shows it. */
  runStartStats(): AdmissionStats | undefined {
    return this.parts.runStarts?.stats();
  }

  async reconcile(): Promise<{ started: string[]; rebuilt: string[] }> {
    await this.parts.pool?.prune();
    const result = await reconcile(this.parts, { renew: !this.renewed });
    this.renewed = true;
    await collectLeftovers(this.parts);
    return result;
  }

  async inspect(sessionId: string): Promise<SandboxInfo> {
    const info = await inspectSandbox(this.parts, sessionId);
    if (info.status !== 'missing') return info;
    // A claim may be finishing under the session's lock (its container not renamed yet).
    return this.parts.locks.withLock(sessionId, () => inspectSandbox(this.parts, sessionId));
  }

  async destroy(sessionId: string): Promise<boolean> {
    const existed = await destroySandbox(this.parts, sessionId);
    this.use.forget(sessionId);
    this.parts.logs.forget(sessionId);
    this.contexts.forget(sessionId);
    return existed;
  }

  pause(sessionId: string, unusedForMs = 0): Promise<SandboxInfo> {
    return pauseSandbox(this.parts, sessionId, { use: this.use, unusedForMs });
  }

  /** A use of the session: a pause or deep sleep that comes next waits for its idle delay. */
  resume(sessionId: string): Promise<SandboxInfo> {
    return this.use.track(sessionId, () => resumeSandbox(this.parts, sessionId));
  }

  /** With `evacuate` (the session leaves the node), its runs' logs go to the blob store too. */
  async hibernate(
    sessionId: string,
    { unusedForMs = 0, evacuate = false }: { unusedForMs?: number; evacuate?: boolean } = {},
  ): Promise<Hibernated> {
    const saved = await hibernateSandbox(
      this.parts,
      sessionId,
      { use: this.use, unusedForMs },
      { evacuate },
    );
    if (evacuate && !saved.inUse && !saved.keptDisk && this.parts.logs.has(sessionId)) {
      const { blobs, logs } = this.parts;
      logs.flush(); // its newest runs' files, made off their path, before they are packed
      await blobs.saveLogs(sessionId, logs.dirOf(sessionId));
      logs.forget(sessionId);
    }
    return saved;
  }

  /**
   * Counted as a request served: the request waiting on a wake would otherwise share the CPU,
   * the disk and dockerd with the refill of the pool member it took. A session this node has
   * no logs of gets those its last node saved when it moved (if any).
   */
  async restore(spec: SandboxSpec): Promise<SandboxInfo> {
    const info = await this.served(spec.sessionId, () => restoreSandbox(this.parts, spec));
    await restoreMovedLogs(this.parts, spec.sessionId);
    return info;
  }

  count(): Promise<number> {
    return countSandboxes(this.parts);
  }

  setEgress(sessionId: string, policy: EgressPolicy): Promise<SandboxInfo> {
    return replaceEgress(this.parts, sessionId, policy);
  }

  /** The runner of a running sandbox; 404 session_not_found when there is none. */
  private async runnerOf(sessionId: string): Promise<RunnerClient> {
    const info = await requireRunning(this.parts, sessionId);
    return this.parts.runners.get(sessionId, info.id);
  }

  /** A run goes on when its caller goes away (its output is kept): `_signal` does not stop it. */
  exec(spec: RunSpec, sink: ByteSink, _signal: AbortSignal): Promise<RunResult> {
    return this.served(spec.sessionId, () =>
      this.runSlots.within(spec.sessionId, () =>
        this.contexts.cell(spec, () => this.execNow(spec, sink)),
      ),
    );
  }

  listProcesses(sessionId: string): ProcessSummary[] {
    return this.parts.logs.list(sessionId).map(summaryOf);
  }

  process(sessionId: string, ref: string): ProcessSummary {
    return summaryOf(this.parts.logs.find(sessionId, ref));
  }

  async readOutput(
    sessionId: string,
    ref: string,
    from: OutputPosition,
    take: (item: LogItem) => Promise<void> | void,
    options: { follow: boolean; untilExit: boolean; signal: AbortSignal },
  ): Promise<{ summary: ProcessSummary; at: OutputPosition }> {
    const log = this.parts.logs.find(sessionId, ref);
    const at = await log.read(from, take, options);
    return { summary: summaryOf(log), at };
  }

  /** Waits at most `waitMs` for the process to take the bytes; what it took. */
  writeStdin(
    sessionId: string,
    ref: string,
    { data, close, waitMs }: { data: Buffer; close: boolean; waitMs: number },
  ): Promise<{ written: number; complete: boolean }> {
    return this.use.track(sessionId, async () => {
      const log = this.parts.logs.find(sessionId, ref);
      const { input } = log;
      if (input === undefined) throw stdinClosed(log);
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), waitMs);
      try {
        const written = await input(data, close, abort.signal);
        log.tookInput(written);
        return { written, complete: written === data.length };
      } finally {
        clearTimeout(timer);
      }
    });
  }

  /** A data request of a session, counted while it runs (by the node and the session). */
  private served<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    return this.use.track(sessionId, () => this.counted(work));
  }

  /** Work counted in the node's load while it runs (the pool refills when there is none). */
  private counted<T>(work: () => Promise<T>): Promise<T> {
    const { load } = this.parts;
    return load === undefined ? work() : load.track(work);
  }

  private async execNow(spec: RunSpec, sink: ByteSink): Promise<RunResult> {
    const { runners, installer, workspaces, logger, config, logs } = this.parts;
    const info = await requireRunning(this.parts, spec.sessionId);
    const runner = runners.get(spec.sessionId, info.id);
    const deps = { runner, installer, workspaces, logger, logs, diskQuota: config.diskQuota };
    return meteredExec(
      { ...deps, ledger: this.ledger, starts: this.parts.runStarts },
      info,
      spec,
      sink,
    );
  }

  async terminal(spec: TerminalSpec, sink: ByteSink, signal: AbortSignal): Promise<TerminalHandle> {
    // In use while its program runs: the session neither idles nor sleeps under a terminal.
    let ended: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (ended = resolve));
    void this.use.track(spec.sessionId, () => running);
    try {
      const handle = await runnerRequests.openTerminal(
        await this.runnerOf(spec.sessionId),
        spec,
        sink,
        signal,
      );
      void handle.exited.finally(ended).catch(() => undefined);
      return handle;
    } catch (err) {
      ended();
      throw err;
    }
  }

  kill(sessionId: string, pid: number | undefined): Promise<number[]> {
    return this.use.track(sessionId, async () => {
      if (pid === undefined) {
        const info = await requireRunning(this.parts, sessionId);
        return killAllInContainer(this.parts.containers, info);
      }
      return runnerRequests.kill(await this.runnerOf(sessionId), pid);
    });
  }

  writeFile(sessionId: string, file: FileContent): Promise<{ path: string; size: number }> {
    return this.served(sessionId, async () =>
      runnerRequests.writeFile(await this.runnerOf(sessionId), file),
    );
  }

  readFile(sessionId: string, path: string, sink: ByteSink, signal: AbortSignal): Promise<number> {
    return this.served(sessionId, async () =>
      runnerRequests.readFile(await this.runnerOf(sessionId), path, sink, signal),
    );
  }

  listFiles(sessionId: string, path: string, page: ListPage): Promise<FileListing> {
    return this.served(sessionId, async () =>
      runnerRequests.listFiles(await this.runnerOf(sessionId), path, page),
    );
  }

  async watchFiles(
    sessionId: string,
    spec: WatchSpec,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEndReason> {
    // Only the opening counts as the session's use: the session may go idle under a watch.
    const runner = await this.served(sessionId, () => this.runnerOf(sessionId));
    return runnerRequests.watchFiles(runner, spec, onEvent, signal);
  }

  manageFile<O extends FileOperation>(
    sessionId: string,
    operation: O,
  ): Promise<FileOperationResult<O>> {
    return this.served(sessionId, async () =>
      runnerRequests.manageFile(await this.runnerOf(sessionId), operation),
    );
  }

  manageContexts(sessionId: string, action: ContextAction): Promise<CodeContextInfo[]> {
    return this.served(sessionId, async () =>
      this.contexts.manage(sessionId, action, await this.runnerOf(sessionId)),
    );
  }

  /** Forks of a session, files only (ADR 43). */
  fork(sourceId: string, specs: readonly SandboxSpec[]): Promise<ForkResult> {
    return this.served(sourceId, () => forkSandboxes(this.parts, sourceId, specs));
  }

  /** A preview visit is a use of the session. */
  previewHost(sessionId: string): Promise<string> {
    return this.use.track(sessionId, () => this.previewAddress(sessionId));
  }

  private async previewAddress(sessionId: string): Promise<string> {
    const info = await requireRunning(this.parts, sessionId);
    const address = info.addresses[this.parts.config.sandboxNetwork];
    if (address === undefined || address === '') {
      throw new AppError('service_unavailable', 'The sandbox has no network address', {
        retryAfter: 1,
      });
    }
    return address;
  }
}
