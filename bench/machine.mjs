// What machine the benchmarks ran on, and how busy it has been.
import { cpus, totalmem } from 'node:os';

/** The CPU time all the machine's cores have spent busy so far, in ms (os.cpus(): /proc/stat). */
export function machineBusyMs() {
  return cpus().reduce((sum, { times: t }) => sum + t.user + t.nice + t.sys + t.irq, 0);
}

export function machine() {
  return `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}
