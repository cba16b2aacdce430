import { readFileSync, statSync } from 'node:fs';

/**
 * The front's shells still being armed (ADR 48), which the front has not named yet: the front
 * learns a shell's pid only once its spawner answered, and a `stats` or `kill` request can come
 * between (on gVisor a start takes 100 ms or more). Such a shell is the front's spawner's child
 * and either not yet exec'd (its command line is still the spawner's) or an armed shell's bash
 * still holding its command pipe (fd 3). Neither is the user's process.
 */

/** How `ps` shows an armed shell waiting (packages/runner/front/shells.go, shellScript). */
export const ARMED_SHELL_ARGV = ['/bin/bash', '-c', 'IFS= read -r -u 3 -N 2 __sandbox_shell '];

/** The pids among `all` that are shells the front is arming, under its spawners `spawners`. */
export function armingShells(
  all: readonly { pid: number; ppid: number }[],
  spawners: ReadonlySet<number>,
  procRoot = '/proc',
): number[] {
  const cmdline = (pid: number): string | undefined => {
    try {
      return readFileSync(`${procRoot}/${pid}/cmdline`, 'latin1');
    } catch {
      return undefined;
    }
  };
  const armed = ARMED_SHELL_ARGV.join('\0');
  const found: number[] = [];
  for (const spawner of spawners) {
    const own = cmdline(spawner);
    for (const p of all) {
      if (p.ppid !== spawner) continue;
      const line = cmdline(p.pid);
      if (line === undefined) continue;
      if (line === own || (line.startsWith(armed) && holdsPipe(p.pid, 3, procRoot))) {
        found.push(p.pid);
      }
    }
  }
  return found;
}

function holdsPipe(pid: number, fd: number, procRoot: string): boolean {
  try {
    return statSync(`${procRoot}/${pid}/fd/${fd}`).isFIFO();
  } catch {
    return false;
  }
}
