import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { META_BYTE, recordsOf } from './log-records';
import { ProcessLog } from './process-log';
import { metaOf, type ProcessMeta } from './process-meta';

/**
 * A log found on disk (an agent restarted since it was written), from the newest whole meta
 * record of its segments `seqs` (any order); undefined if none has one. Segment files its
 * meta does not name (made by an agent that died before it wrote that meta) are removed.
 */
export function loadProcessLog(dir: string, id: string, seqs: number[]): ProcessLog | undefined {
  const newestFirst = [...seqs].sort((a, b) => b - a);
  for (const seq of newestFirst) {
    let meta: ProcessMeta | undefined;
    let data: Buffer;
    try {
      data = readFileSync(join(dir, `${id}.${seq}.log`));
      for (const record of recordsOf(data)) {
        if (record.kind === META_BYTE) meta = metaOf(record.body.toString('utf8'), id) ?? meta;
      }
    } catch {
      continue; // unreadable: an older segment may hold a meta
    }
    if (meta === undefined) continue;
    const named = new Set(meta.segments.map((segment) => segment.seq));
    for (const other of seqs) {
      if (!named.has(other)) rmSync(join(dir, `${id}.${other}.log`), { force: true });
    }
    // Its end is in the segment just read, unless a newer one went with the others.
    const read = meta.segments.at(-1)?.seq === seq ? data : undefined;
    return ProcessLog.reopen(dir, meta, { lastSegment: read });
  }
  return undefined;
}
