import { AppError } from '@sandbox/errors';
import type { OutputPosition, ProcessMeta } from './process-meta';
import type { ProcessLog } from './process-log';

/* How the runtime shows a process's log to its callers. */

/** A process of the list: what it is, how it is doing, how much output it wrote. */
export interface ProcessSummary {
  meta: ProcessMeta;
  /** Bytes written to each stream in all. */
  written: OutputPosition;
  /** Where the kept output begins (older output was dropped at the cap). */
  keptFrom: OutputPosition;
}

/** What a caller sees of a process: its meta, the output it wrote, where the kept part starts. */
export function summaryOf(log: ProcessLog): ProcessSummary {
  return { meta: log.meta, written: log.position, keptFrom: log.keptFrom };
}

/** The error for input sent to a process that takes none now, saying why. */
export function stdinClosed(log: ProcessLog): AppError {
  const reason = !log.meta.stdin ? 'not started with stdin' : 'stdin closed or process exited';
  return new AppError('stdin_closed', `Process ${log.meta.pid} takes no input (${reason})`, {
    details: { pid: log.meta.pid, processId: log.meta.id },
  });
}
