import { AppError } from '@sandbox/errors';

export interface ColdStartsOptions {
  /** Cold starts under way at once; the others wait their turn. */
  concurrency: number;
  /** Cold starts waiting at most; one more is refused at once. */
  maxQueued: number;
  /** What a cold start is taken to last before one has been timed. */
  initialMs?: number;
  now?: () => number;
}

/** What the admission of cold starts shows (`/metrics`). */
export interface ColdStartStats {
  running: number;
  queued: number;
  /** How long a cold start takes now (a moving average of the last ones). */
  typicalMs: number;
  refused: number;
}

interface Waiter {
  start: () => void;
  refuse: (err: AppError) => void;
  deadlineAt?: number;
}

/** A deadline is met only with this much to spare: the answer still has to travel back. */
const MARGIN_MS = 300;
/** Weight of the newest duration in the moving average. */
const NEWEST = 0.3;

/**
 * Admission of the creates the warm pool cannot serve (issue 39): a few start at once, the
 * others wait in a bounded queue, and one that would wait and could not finish before its
 * caller's deadline (judged from how long cold starts take now) is refused at once with 503
 * and Retry-After, before anything is made. A start whose turn comes too late is refused then, still before
 * anything is made. So a create is never half-built and then cancelled.
 */
export class ColdStarts {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private typicalMs: number;
  private refused = 0;
  private readonly now: () => number;

  constructor(private readonly options: ColdStartsOptions) {
    this.typicalMs = options.initialMs ?? 2000;
    this.now = options.now ?? Date.now;
  }

  stats(): ColdStartStats {
    return {
      running: this.running,
      queued: this.waiting.length,
      typicalMs: Math.round(this.typicalMs),
      refused: this.refused,
    };
  }

  /** How long a cold start asked for now would take to finish, its wait included. */
  expectedMs(): number {
    const ahead = this.running + this.waiting.length;
    const rounds = Math.floor(ahead / this.options.concurrency) + 1;
    return rounds * this.typicalMs;
  }

  /** Runs `work` in its turn; refuses it (503) when it cannot finish by `deadlineAt`. */
  async run<T>(work: () => Promise<T>, deadlineAt?: number): Promise<T> {
    if (this.running < this.options.concurrency) {
      // A free slot starts at once, whatever the estimate: the estimate is only ever judged
      // against others ahead, and a start that runs teaches it how long starts take now.
      this.running += 1;
    } else {
      if (this.waiting.length >= this.options.maxQueued) {
        throw this.refusal('Too many sandboxes are being started on this node');
      }
      if (this.late(deadlineAt, this.expectedMs())) {
        throw this.refusal('This node cannot start a sandbox before the request times out');
      }
      // A turn comes with its slot counted (by `next`), so no newcomer takes it meanwhile.
      await this.turn(deadlineAt);
    }
    const startedAt = this.now();
    try {
      return await work();
    } finally {
      this.typicalMs += NEWEST * (this.now() - startedAt - this.typicalMs);
      this.running -= 1;
      this.next();
    }
  }

  private late(deadlineAt: number | undefined, ms: number): boolean {
    return deadlineAt !== undefined && this.now() + ms + MARGIN_MS > deadlineAt;
  }

  private turn(deadlineAt: number | undefined): Promise<void> {
    return new Promise((start, refuse) => {
      this.waiting.push({ start, refuse, ...(deadlineAt === undefined ? {} : { deadlineAt }) });
    });
  }

  /** Hands the free slot to the next waiter that can still finish in time. */
  private next(): void {
    while (this.running < this.options.concurrency) {
      const waiter = this.waiting.shift();
      if (waiter === undefined) return;
      if (this.late(waiter.deadlineAt, this.typicalMs)) {
        waiter.refuse(this.refusal('This node could not start the sandbox in time'));
        continue;
      }
      this.running += 1;
      waiter.start();
    }
  }

  private refusal(message: string): AppError {
    this.refused += 1;
    return new AppError('service_unavailable', `${message}; try again shortly`, {
      retryAfter: Math.max(1, Math.ceil(this.expectedMs() / 1000)),
    });
  }
}
