import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@sandbox/logger';
import { META_FILE, SEGMENT_FILE } from './log-files';
import { META_BYTE, recordsOf } from './log-records';
import { ProcessLog } from './process-log';
import { metaOf, type ProcessMeta } from './process-meta';

/**
 * A session's logs as its directory `dir` holds them (at an agent's start, or once a moved
 * session's logs were unpacked there), oldest first, their output closed: a process still
 * running when they were written is `lost`. Files no log can be read from are removed.
 */
export function loadSessionLogs(dir: string, sessionId: string, logger: Logger): ProcessLog[] {
  const loadedLogs: ProcessLog[] = [];
  const names = readdirSync(dir);
  const legacy = numberedFiles(names, META_FILE);
  const segments = numberedFiles(names, SEGMENT_FILE);
  for (const id of new Set([...segments.keys(), ...legacy.keys()])) {
    const seqs = (segments.get(id) ?? []).map(([seq]) => seq);
    const loaded =
      loadProcessLog(dir, id, seqs) ??
      loadLegacy(dir, id, legacy.get(id), (err, file) =>
        logger.warn({ err, sessionId, file }, 'unreadable process log meta'),
      );
    if (loaded === undefined) {
      // Nothing can read its output: its files go.
      logger.warn({ sessionId, process: id }, 'unreadable process log: removed');
      for (const seq of seqs) rmSync(join(dir, `${id}.${seq}.log`), { force: true });
      continue;
    }
    // An older agent's metas, once the segments hold a newer one.
    if (!loaded.fromLegacyMeta) {
      for (const [, name] of legacy.get(id) ?? []) rmSync(join(dir, name), { force: true });
    }
    loaded.closeOutput(); // a process still running then is lost
    loadedLogs.push(loaded);
  }
  // In the order they started, as the logs of a running node are (see ProcessLogs' prune).
  return loadedLogs.sort((a, b) => a.meta.startedAt.localeCompare(b.meta.startedAt));
}

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

/**
 * A log an older agent wrote, its meta in files of their own: the newest that parses (an
 * agent that died while writing one leaves it cut short). The others go once one is found;
 * each that does not parse goes too, told to `unreadable`.
 */
function loadLegacy(
  dir: string,
  id: string,
  generations: [number, string][] = [],
  unreadable: (err: unknown, file: string) => void,
): ProcessLog | undefined {
  for (const [index, [, name]] of generations.entries()) {
    const path = join(dir, name);
    try {
      const meta = metaOf(readFileSync(path, 'utf8'), id);
      if (meta === undefined) throw new Error('not a meta of this process');
      for (const [, other] of generations.slice(index + 1)) {
        rmSync(join(dir, other), { force: true });
      }
      return ProcessLog.reopen(dir, meta, { legacyMeta: path });
    } catch (err) {
      unreadable(err, name);
      rmSync(path, { force: true });
    }
  }
  return undefined;
}

/**
 * The files among `names` that `pattern` matches (its groups: a process id, a number), by
 * process id, each id's highest number first (a meta's generation, a segment's number).
 */
function numberedFiles(names: string[], pattern: RegExp): Map<string, [number, string][]> {
  const byId = new Map<string, [number, string][]>();
  for (const name of names) {
    const match = pattern.exec(name);
    if (match === null) continue;
    const id = match[1] as string;
    const list = byId.get(id) ?? [];
    list.push([Number(match[2] ?? 0), name]);
    byId.set(id, list);
  }
  for (const list of byId.values()) list.sort((a, b) => b[0] - a[0]);
  return byId;
}
