import { AppError } from '@sandbox/errors';

export interface AdmissionOptions {
  /** Starts under way at once; the others wait their turn. */
  concurrency: number;
  /** Starts waiting at most; one more is refused at once. */
  maxQueued: number;
  /** What a start is taken to last before one has been timed (or learnt, see `learn`). */
  initialMs?: number;
  now?: () => number;
}

/** What the node says when it refuses a start (a sandbox's, a run's). */
export interface AdmissionWords {
  /** The queue is full. */
  busy: string;
  /** The start could not finish before its deadline, were it to wait. */
  late: string;
  /** Its turn came too late. */
  missed: string;
}

/** What an admission shows (`/metrics`). */
export interface AdmissionStats {
  running: number;
  queued: number;
  /** How long a start takes now (a moving average of the last ones). */
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
 * What a start is taken to last before any was timed: a cold sandbox start here is 0.3–2.3 s
 * (a quiet and a slow hour). A guess at the slow end refused the 9th of 10 creates sent
 * right after the node started, whose 8 admitted took 2.4 s in all; a guess too short costs
 * a waiter refused at its turn (still before anything is made) rather than at once.
 */
const DEFAULT_INITIAL_MS = 1000;

export const COLD_START_WORDS: AdmissionWords = {
  busy: 'Too many sandboxes are being started on this node',
  late: 'This node cannot start a sandbox before the request times out',
  missed: 'This node could not start the sandbox in time',
};

export const RUN_START_WORDS: AdmissionWords = {
  busy: 'Too many runs are being started on this node',
  late: 'This node cannot start the run before its timeout',
  missed: 'This node could not start the run in time',
};

/**
 * Admission of the starts a saturated node would otherwise pile up (issue 39): the creates
 * the warm pool cannot serve, and the starts of runs. A few start at once, the others wait in
 * a bounded queue, and one that would wait and could not finish before its deadline (judged
 * from how long starts take now) is refused at once with 503 and Retry-After, before anything
 * is made. A start whose turn comes too late is refused then, still before anything is made.
 * So nothing is half-built and then cancelled.
 */
export class Admission {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  private typicalMs: number;
  /** Starts timed here; until the first, `typicalMs` is a guess (or learnt elsewhere). */
  private timed = 0;
  private learnt = false;
  private refused = 0;
  private readonly now: () => number;

  constructor(
    private readonly options: AdmissionOptions,
    private readonly words: AdmissionWords = COLD_START_WORDS,
  ) {
    this.typicalMs = options.initialMs ?? DEFAULT_INITIAL_MS;
    this.now = options.now ?? Date.now;
  }

  stats(): AdmissionStats {
    return {
      running: this.running,
      queued: this.waiting.length,
      typicalMs: Math.round(this.typicalMs),
      refused: this.refused,
    };
  }

  /**
   * A start of the same kind timed elsewhere on this node (a warm-pool member made): taken
   * only while no start has been timed here, in place of the first guess.
   */
  learn(ms: number): void {
    if (this.timed > 0) return;
    this.typicalMs = this.learnt ? this.typicalMs + NEWEST * (ms - this.typicalMs) : ms;
    this.learnt = true;
  }

  /** How long a start asked for now would take to finish, its wait included. */
  expectedMs(): number {
    const ahead = this.running + this.waiting.length;
    const rounds = Math.floor(ahead / this.options.concurrency) + 1;
    return rounds * this.typicalMs;
  }

  /** Runs `work` in its turn; refuses it (503) when it cannot finish by `deadlineAt`. */
  async run<T>(work: () => Promise<T>, deadlineAt?: number): Promise<T> {
    const done = await this.enter(deadlineAt);
    try {
      return await work();
    } finally {
      done();
    }
  }

  /**
   * Waits for a turn (refused as `run` is); the start has ended, and its slot is free, at the
   * first call of what it resolves to.
   */
  async enter(deadlineAt?: number): Promise<() => void> {
    if (this.running < this.options.concurrency) {
      // A free slot starts at once, whatever the estimate: the estimate is only ever judged
      // against others ahead, and a start that runs teaches it how long starts take now.
      this.running += 1;
    } else {
      if (this.waiting.length >= this.options.maxQueued) throw this.refusal(this.words.busy);
      if (this.late(deadlineAt, this.expectedMs())) throw this.refusal(this.words.late);
      // A turn comes with its slot counted (by `next`), so no newcomer takes it meanwhile.
      await this.turn(deadlineAt);
    }
    const startedAt = this.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      // The first start timed here replaces the guess; the next ones move the average.
      const took = this.now() - startedAt;
      this.typicalMs = this.timed === 0 ? took : this.typicalMs + NEWEST * (took - this.typicalMs);
      this.timed += 1;
      this.running -= 1;
      this.next();
    };
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
        waiter.refuse(this.refusal(this.words.missed));
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
