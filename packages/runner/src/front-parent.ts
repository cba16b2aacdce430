import { readFileSync } from 'node:fs';
import { RUNNER_FRONT_PATH } from '@sandbox/contract/run';

/**
 * The pid of the runner's front, which started this runner (ADR 34): the parent, when its
 * command line is the front's. The front holds the agent's link (ADR 33) and speaks to this
 * runner over stdio. No process of the user's can be the runner's parent.
 */
export function frontParent(parent: number = process.ppid, procRoot = '/proc'): number | undefined {
  let cmdline: string;
  try {
    cmdline = readFileSync(`${procRoot}/${parent}/cmdline`, 'latin1');
  } catch {
    return undefined;
  }
  return cmdline === `${RUNNER_FRONT_PATH}\0` ? parent : undefined;
}
