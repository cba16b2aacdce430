import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import type { LogItem, OutputPosition } from './process-meta';
import { ProcessLogs } from './process-logs';

/** What the process-log tests share: a silent logger, a session, a started log, its reads. */
/** A new directory for each test of the file, removed after it: `dir()` is the current one. */
export function tempDirPerTest(prefix: string): () => string {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}

export const logger = createLogger({ name: 'test', level: 'silent' });

export const SESSION = 'ses_abc';
export const start = (logs: ProcessLogs, capBytes = 1024, pid = 10, sessionId = SESSION) =>
  logs.start({
    sessionId,
    pid,
    kind: 'command',
    source: 'echo hi',
    stdin: false,
    capBytes,
  });

/** A log started in a ProcessLogs of its own at `dir`, for a test that needs only the log. */
export const newLog = (dir: string, capBytes?: number) =>
  start(new ProcessLogs(dir, logger), capBytes);

/** Everything a read hands over, as `stream:text` (and `gap@o,e`). */
export async function readAll(
  log: ReturnType<typeof start>,
  from: OutputPosition = { stdout: 0, stderr: 0 },
  options: { follow?: boolean; untilExit?: boolean } = {},
): Promise<{ items: string[]; at: OutputPosition }> {
  const items: string[] = [];
  const take = (item: LogItem) => {
    items.push(
      'gap' in item
        ? `gap@${item.gap.stdout},${item.gap.stderr}`
        : `${item.stream}:${item.data.toString()}`,
    );
  };
  const at = await log.read(from, take, {
    follow: options.follow ?? false,
    untilExit: options.untilExit ?? false,
  });
  return { items, at };
}
