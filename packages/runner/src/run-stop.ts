/*
 * How the runner's Node stops its code runs (a timeout, a cancel) and terminals (a cancel).
 * Command runs are the front's, which stops them alike (front/run_stop.go; ADR 47).
 */
import { killAll, listProcesses, markedWith, runTree, stopThenKill, treesOf } from './processes';

/** The environment variable that marks every process of a run (and what they start). */
export const RUN_MARK = 'SANDBOX_RUN_ID';
/** After a hangup, how long the command gets before it is killed. */
const HANGUP_GRACE_MS = 500;

/** Kills a run's tree, what it stopped on the way, and every process carrying its mark. */
export async function killRunTree(leader: number, runId: string): Promise<void> {
  await stopThenKill(async (all, stopped) => [
    ...runTree(all, leader).map((p) => p.pid),
    ...treesOf(all, [], stopped),
    ...(await markedWith(all, `${RUN_MARK}=${runId}`)),
  ]);
}

/** Kills the run marked `runId` when `timeoutMs` have passed, unless cleared first. */
export class RunTimeout {
  timedOut = false;
  private readonly timer: NodeJS.Timeout;

  constructor(leader: number, runId: string, timeoutMs: number) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      // A failure here leaves the run to the agent's guard, which restarts the runner.
      killRunTree(leader, runId).catch((err: unknown) =>
        process.stderr.write(`killing a timed-out run: ${String(err)}\n`),
      );
    }, timeoutMs);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Stops a run because its client went away: a hangup (SIGHUP) to its process group, as a
 * closing terminal would, so `nohup`ed and `setsid` background processes live on; what
 * remains of the run's own command (its leader) is then killed.
 */
export function hangUp(leader: number): void {
  try {
    process.kill(-leader, 'SIGHUP');
  } catch {
    return; // the group is gone
  }
  setTimeout(() => {
    void listProcesses().then((all) => {
      // The command; not the background processes it started.
      killAll(all.filter((p) => p.pid === leader).map((p) => p.pid));
    });
  }, HANGUP_GRACE_MS).unref();
}
