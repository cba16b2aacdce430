import type { SpawnedRun } from './spawner';

/**
 * How long after a context's start (or a cell's) the next spare starts: a Node's start-up
 * takes the session's CPU (a quarter of a core by default) for a good part of a second, and
 * the cell an agent sends right after making a context should not wait behind it.
 */
export const SPARE_DELAY_MS = 500;

/**
 * One context process started ahead for a session's next context (ADR 42), so that a create
 * costs no Node start-up: started only once the session has made a context (a session that
 * never does pays nothing), again after each one taken, out of the way of the cells. It is a
 * context process like any (the spawner's, as the sandbox user, in the session's CPU group and
 * memory), waiting for its greeting, which gives it its directory and environment.
 */
export class SpareContext {
  private spare: Promise<SpawnedRun> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly start: () => Promise<SpawnedRun>,
    private readonly delayMs = SPARE_DELAY_MS,
  ) {}

  /** Starts a spare `delayMs` from now (from now again if one was due), unless there is one. */
  armSoon(): void {
    if (this.closed || this.spare !== undefined) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.arm(), this.delayMs);
    this.timer.unref();
  }

  /** A cell starts: a spare due is put off, so that its start-up takes no CPU from the cell. */
  putOff(): void {
    if (this.timer !== undefined) this.armSoon();
  }

  /** The spare, taken (undefined if there is none); the next one is armed. */
  take(): Promise<SpawnedRun> | undefined {
    const spare = this.spare;
    this.spare = undefined;
    this.armSoon();
    return spare;
  }

  /** Ends the spare for good (the runner stops). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    const spare = this.spare;
    this.spare = undefined;
    spare?.then(end, () => undefined);
  }

  private arm(): void {
    this.timer = undefined;
    const starting = this.start();
    this.spare = starting;
    starting.then(
      (process) => {
        if (this.spare !== starting) return; // taken meanwhile, or closed
        // Killed while it waited (a user's kill-all): the next create starts its own.
        void process.exited
          .catch(() => undefined)
          .finally(() => {
            if (this.spare === starting) this.spare = undefined;
          });
      },
      () => {
        if (this.spare === starting) this.spare = undefined;
      },
    );
  }
}

/** A spare's end: its stdin closes (it exits), then it is killed. */
function end(process: SpawnedRun): void {
  process.input?.end().catch(() => undefined);
  try {
    global.process.kill(process.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
