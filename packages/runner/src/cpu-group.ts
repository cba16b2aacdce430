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

/** Moves this process (all its threads) into the session's CPU group. */
export function enterCpuGroup(procs = USER_CPU_PROCS): void {
  writeFileSync(procs, '0');
}
