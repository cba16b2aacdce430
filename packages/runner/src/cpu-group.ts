import { existsSync, writeFileSync } from 'node:fs';
import { USER_CPU_PROCS } from '@sandbox/contract/run';

/*
 * `USER_CPU_PROCS`: the session's CPU group, as the agent mounts it into the sandbox. User
 * processes run in that group, under the session's CPU limit; the runner and the zygotes it
 * starts ahead of time stay outside it, so that the runner's own work never takes the
 * session's CPU. A process can only enter the group through this file (writing `0` moves the
 * writer), never leave it.
 */

/** Exit status of a run whose process could not enter the session's CPU group. */
export const CPU_GROUP_EXIT_CODE = 125;

/** Whether this sandbox splits CPU: user processes must enter `USER_CPU_PROCS` first. */
export function splitsCpu(procs = USER_CPU_PROCS): boolean {
  return existsSync(procs);
}

/**
 * The command line that runs `argv` inside the session's CPU group: a `sh` moves itself into
 * the group, then becomes `argv` (same pid, so every process the run starts is in it). A run
 * that cannot enter the group does not start.
 */
export function inCpuGroup(argv: readonly string[], procs = USER_CPU_PROCS): string[] {
  const enter =
    `echo 0 >"$0" || { echo "sandbox: could not enter the session's CPU limit" >&2; ` +
    `exit ${CPU_GROUP_EXIT_CODE}; }; exec "$@"`;
  return ['/bin/sh', '-c', enter, procs, ...argv];
}

/** Moves this process (all its threads) into the session's CPU group. */
export function enterCpuGroup(procs = USER_CPU_PROCS): void {
  writeFileSync(procs, '0');
}
