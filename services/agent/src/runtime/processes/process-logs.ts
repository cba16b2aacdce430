import { mkdirSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '@sandbox/errors';
import type { Logger } from '@sandbox/logger';
import { loadSessionLogs } from './load-process-log';
import { reuseFile } from './log-files';
import { ProcessLog } from './process-log';
import { LABEL_CHARS, newProcessId } from './process-meta';
import { SpareFiles } from './spare-files';

export interface ProcessLogSettings {
  /** Processes kept per session: past it, the oldest that ended go. */
  maxPerSession: number;
  /** How long a process's log is kept after it ended. */
  keepAfterExitMs: number;
}

export const PROCESS_LOG_DEFAULTS: ProcessLogSettings = {
  maxPerSession: 32,
  keepAfterExitMs: 24 * 3600 * 1000,
};

/** What starts a process's log. */
export interface ProcessStart {
  sessionId: string;
  pid: number;
  kind: 'command' | 'code';
  /** The command or the code. */
  source: string;
  stdin: boolean;
  capBytes: number;
}

const SESSION_DIR = /^ses_[a-z0-9]+$/;

/** Spare files the node makes ahead of need: a burst of 60 sessions' first 16 runs, and more. */
export const SPARE_FILES_STOCK = 1024;

/** How often stocking looks again while the node is busy, or stocked. */
const STOCK_POLL_MS = 100;
const STOCKED_POLL_MS = 1000;

function labelOf(source: string): string {
  const line = source.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > LABEL_CHARS ? `${line.slice(0, LABEL_CHARS - 1)}…` : line;
}

/**
 * The node's record of every session's processes (runs) and their output, on its disk under
 * `root` (one directory per session): kept across idle and deep sleep on this node, removed
 * with the session, and for ended processes after `keepAfterExitMs`.
 */
export class ProcessLogs {
  private readonly sessions = new Map<string, Map<string, ProcessLog>>();
  /** By session: no log of it is past its keep time before this, in epoch ms (see `prune`). */
  private readonly keptUntil = new Map<string, number>();
  /**
   * Sessions whose directory is there: made for a first log, read at start or unpacked (see
   * loadSession), and removed with the session (see forget). Not made again on every run.
   */
  private readonly dirsMade = new Set<string>();
  /** Emptied files of removed logs, for new logs to take (no file made per run). */
  private readonly spares: SpareFiles;
  /** Pruned logs' files being emptied off the runs' path (see releaseLater). */
  private emptying: Promise<void> = Promise.resolve();
  /** File work put off until the run that asked for it has been answered (see `defer`). */
  private readonly deferred: (() => void)[] = [];
  /** New logs whose file is put off: one still running at the first turn is made then. */
  private readonly unmade: ProcessLog[] = [];

  constructor(
    private readonly root: string,
    private readonly logger: Logger,
    private readonly settings: ProcessLogSettings = PROCESS_LOG_DEFAULTS,
  ) {
    mkdirSync(root, { recursive: true, mode: 0o700 });
    this.spares = new SpareFiles(join(root, '.spare'));
    this.load();
  }

  /**
   * Makes spare files until `stock` are ready, one at a time and only while `busy` is false
   * (the node in a pause: a file made costs most when the disk just freed many inodes, and
   * then off the runs' path); then keeps watching, until `signal` aborts.
   */
  async stockSpares(
    busy: () => boolean,
    signal: AbortSignal,
    stock = SPARE_FILES_STOCK,
  ): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      const stocked = this.spares.count >= stock;
      if (stocked || busy()) {
        await sleep(stocked ? STOCKED_POLL_MS : STOCK_POLL_MS, undefined, {
          signal,
          ref: false,
        }).catch(() => undefined);
        continue;
      }
      try {
        await this.spares.make();
        failures = 0;
      } catch (err) {
        // A full disk, say: new logs make their own files meanwhile.
        failures += 1;
        if (failures === 1) this.logger.warn({ err }, 'could not make a spare log file');
        await sleep(STOCKED_POLL_MS * Math.min(failures, 60), undefined, {
          signal,
          ref: false,
        }).catch(() => undefined);
      }
    }
  }

  /** Spare files ready for new logs. */
  get spareCount(): number {
    return this.spares.count;
  }

  /** The logs on disk; those that were running when the agent stopped are `lost`. */
  private load(): void {
    for (const sessionId of readdirSync(this.root)) {
      if (SESSION_DIR.test(sessionId)) this.loadSession(sessionId);
    }
  }

  /**
   * Reads a session's logs from its directory (at start, or once a moved session's logs were
   * unpacked there): a process still running when they were written is `lost`.
   */
  loadSession(sessionId: string): void {
    const loadedLogs = loadSessionLogs(this.dirOf(sessionId), sessionId, this.logger);
    this.sessions.set(sessionId, new Map(loadedLogs.map((log) => [log.meta.id, log])));
    this.keptUntil.delete(sessionId);
    this.dirsMade.add(sessionId);
  }

  /** Where a session's logs are kept on this node. */
  dirOf(sessionId: string): string {
    if (!SESSION_DIR.test(sessionId)) throw new Error(`not a session id: ${sessionId}`);
    return join(this.root, sessionId);
  }

  /** Whether this node keeps logs of the session. */
  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /**
   * A new process's log: listed at once, its file made off the run's path (see `defer`), from
   * a spare file when there is one.
   */
  start(start: ProcessStart): ProcessLog {
    const dir = join(this.root, start.sessionId);
    const logs = this.sessions.get(start.sessionId) ?? new Map<string, ProcessLog>();
    this.sessions.set(start.sessionId, logs);
    this.prune(start.sessionId, logs, 1);
    const startedAt = new Date();
    const log = ProcessLog.create(
      dir,
      {
        id: newProcessId(),
        pid: start.pid,
        kind: start.kind,
        label: labelOf(start.source),
        startedAt: startedAt.toISOString(),
        state: 'running',
        stdin: start.stdin,
        stdinBytes: 0,
        outputClosed: false,
        capBytes: start.capBytes,
      },
      (path) => {
        this.makeDir(start.sessionId, dir);
        const spare = this.spares.take();
        return spare === undefined ? openSync(path, 'a', 0o600) : reuseFile(spare, path);
      },
    );
    logs.set(log.meta.id, log);
    this.keepsUntil(start.sessionId, startedAt.getTime() + this.settings.keepAfterExitMs);
    this.unmade.push(log);
    this.defer(() => log.flush());
    return log;
  }

  private makeDir(sessionId: string, dir: string): void {
    if (this.dirsMade.has(sessionId)) return;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      this.dirsMade.add(sessionId);
    } catch (err) {
      // The run goes on unlogged (its log cannot make its file); the next run tries again.
      this.logger.warn({ err, sessionId }, "cannot keep a run's output");
    }
  }

  /**
   * Puts file work (a new log's file, a pruned log's removal) off until the run that asked for
   * it has been answered: two turns of the event loop, the second after the one in which the
   * run's last message and its status (gRPC's trailers, sent a turn later) leave. A run still
   * going at the first turn (its messages just sent, no status due) has its file made then,
   * so that what its caller saw is kept soon. A restart in between finds the new log absent,
   * the pruned one still there (and prunes it).
   */
  private defer(step: () => void): void {
    this.deferred.push(step);
    if (this.deferred.length > 1) return;
    setImmediate(() => {
      for (const log of this.unmade.splice(0)) if (!log.settled) log.flush();
      setImmediate(() => this.flush());
    });
  }

  /** Does the file work put off so far (see `defer`) now. */
  flush(): void {
    this.unmade.length = 0;
    for (const step of this.deferred.splice(0)) {
      try {
        step();
      } catch (err) {
        this.logger.warn({ err }, 'a run log step failed');
      }
    }
  }

  /** The session's processes, oldest first. */
  list(sessionId: string): ProcessLog[] {
    const logs = this.sessions.get(sessionId);
    if (logs === undefined) return [];
    this.prune(sessionId, logs, 0);
    return [...logs.values()];
  }

  /**
   * A process by its id, or by its pid (the newest with that pid: pids are used again after a
   * deep sleep); 404 process_not_found.
   */
  find(sessionId: string, ref: string): ProcessLog {
    const all = this.list(sessionId);
    const found = /^\d+$/.test(ref)
      ? all.filter((log) => log.meta.pid === Number(ref)).at(-1)
      : all.find((log) => log.meta.id === ref);
    if (found === undefined) {
      throw new AppError('process_not_found', `No process ${ref} in this session`, {
        details: { pid: ref },
      });
    }
    return found;
  }

  /** The session is gone: every log of it too. */
  forget(sessionId: string): void {
    const logs = this.sessions.get(sessionId);
    this.sessions.delete(sessionId);
    this.keptUntil.delete(sessionId);
    this.dirsMade.delete(sessionId);
    for (const log of logs?.values() ?? []) this.releaseLater(log);
    rmSync(join(this.root, sessionId), { recursive: true, force: true });
  }

  /**
   * Drops ended logs past their keep time, and the oldest ended past the count (room for
   * `adding`). A session's logs are kept in the order they started (see loadSession). Every
   * run's start prunes: the logs are looked through only as far as the count needs, and all of
   * them only once one may be past its keep time (`keptUntil`: the earliest a log found here,
   * or started since, can be; a log's end is never before its start, which it counts from
   * until it ends).
   */
  private prune(sessionId: string, logs: Map<string, ProcessLog>, adding: number): void {
    const now = Date.now();
    const { keepAfterExitMs, maxPerSession } = this.settings;
    let excess = logs.size + adding - maxPerSession;
    const timeDue = now > (this.keptUntil.get(sessionId) ?? -Infinity);
    let earliest = now + keepAfterExitMs; // a log started from now on is kept past it
    for (const log of logs.values()) {
      if (excess <= 0 && !timeDue) return;
      const expiresAt = log.endedAtMs + keepAfterExitMs;
      if (log.settled && (excess > 0 || now > expiresAt)) {
        excess -= 1;
        this.defer(() => this.releaseLater(log));
        logs.delete(log.meta.id);
      } else {
        earliest = Math.min(earliest, expiresAt);
      }
    }
    if (timeDue) this.keptUntil.set(sessionId, earliest);
  }

  /** A log of the session may be past its keep time from `at` on (see `prune`). */
  private keepsUntil(sessionId: string, at: number): void {
    const until = this.keptUntil.get(sessionId);
    if (until !== undefined && at < until) this.keptUntil.set(sessionId, at);
  }

  /**
   * Removes a log at once; its newest file is emptied in the thread pool and kept for a new log
   * later, off the path of the run whose start pruned it, or of the session's removal
   * (SpareFiles.giveFull). Never emptied on the event loop: a truncate there waited 0.2–1 ms
   * on ext4 here (ADR 54's amendment), and every session's runs wait behind the loop.
   */
  private releaseLater(log: ProcessLog): void {
    const file = log.detach();
    if (file === undefined) return;
    const giving = this.spares.giveFull(file); // out of the session's directory before it returns
    this.emptying = Promise.all([this.emptying, giving]).then(() => undefined);
  }

  /** Resolves once the files of the logs pruned so far are emptied and kept (or removed). */
  emptied(): Promise<void> {
    this.flush();
    return this.emptying;
  }
}
