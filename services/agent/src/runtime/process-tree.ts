import { readdir, readFile } from 'node:fs/promises';

/** Host pids of `pid` and all its descendants, read from /proc (parents first). */
export async function listProcessTree(pid: number, procRoot = '/proc'): Promise<number[]> {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const current = queue.shift() as number;
    found.push(current);
    let tasks: string[];
    try {
      tasks = await readdir(`${procRoot}/${current}/task`);
    } catch {
      continue; // already gone
    }
    for (const task of tasks) {
      const children = await readFile(`${procRoot}/${current}/task/${task}/children`, 'utf8').catch(
        () => '',
      );
      for (const child of children.split(' ')) {
        const childPid = Number.parseInt(child, 10);
        if (Number.isInteger(childPid) && childPid > 0) queue.push(childPid);
      }
    }
  }
  return found;
}

/** SIGKILLs `pid` and every descendant; returns how many were signalled. */
export async function killProcessTree(pid: number, procRoot = '/proc'): Promise<number> {
  const pids = await listProcessTree(pid, procRoot);
  let killed = 0;
  for (const target of pids) {
    try {
      process.kill(target, 'SIGKILL');
      killed += 1;
    } catch {
      // exited between listing and signalling
    }
  }
  return killed;
}
