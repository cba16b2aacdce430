import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import { LOG_FILE, type LogItem, type OutputPosition } from './process-log';
import { ProcessLogs } from './process-logs';

const logger = createLogger({ name: 'test', level: 'silent' });
let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'process-logs-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const SESSION = 'ses_abc';
const start = (logs: ProcessLogs, capBytes = 1024, pid = 10) =>
  logs.start({
    sessionId: SESSION,
    pid,
    kind: 'command',
    source: 'echo hi',
    stdin: false,
    capBytes,
  });

/** Everything a read hands over, as `stream:text` (and `gap@o,e`). */
async function readAll(
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

/** The `code` of what `fn` throws. */
function codeOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return (err as { code?: unknown }).code;
  }
  return undefined;
}

describe('ProcessLog', () => {
  it('hands back the output in order from any position, a record cut where it asks', async () => {
    const logs = new ProcessLogs(root, logger);
    const log = start(logs);
    log.append('stdout', Buffer.from('hello '));
    log.append('stderr', Buffer.from('oops'));
    log.append('stdout', Buffer.from('world'));
    expect(await readAll(log)).toEqual({
      items: ['stdout:hello ', 'stderr:oops', 'stdout:world'],
      at: { stdout: 11, stderr: 4 },
    });
    expect((await readAll(log, { stdout: 3, stderr: 4 })).items).toEqual([
      'stdout:lo ',
      'stdout:world',
    ]);
    expect((await readAll(log, { stdout: 11, stderr: 2 })).items).toEqual(['stderr:ps']);
  });

  it('keeps the newest output at its cap, and says where a too-old reader goes on', async () => {
    const logs = new ProcessLogs(root, logger);
    const log = start(logs, 100);
    for (let i = 0; i < 20; i += 1)
      log.append('stdout', Buffer.from(`${String(i).padStart(9, '0')}\n`));
    expect(log.position).toEqual({ stdout: 200, stderr: 0 });
    const kept = log.keptFrom.stdout;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeGreaterThanOrEqual(200 - 100 - 15); // the newest half at least
    const { items } = await readAll(log);
    expect(items[0]).toBe(`gap@${kept},0`);
    expect(
      items
        .slice(1)
        .join('')
        .replace(/stdout:/g, '')
        .endsWith('000000019\n'),
    ).toBe(true);
  });

  it('follows appends until the process ended and its output closed', async () => {
    const logs = new ProcessLogs(root, logger);
    const log = start(logs);
    const reading = readAll(log, undefined, { follow: true });
    await new Promise((resolve) => setImmediate(resolve));
    log.append('stdout', Buffer.from('a'));
    setTimeout(() => {
      log.append('stdout', Buffer.from('b'));
      log.exited({
        result: {
          exitCode: 0,
          executionTimeMs: 1,
          memoryUsedBytes: 0,
          cpuTimeMs: 0,
          timedOut: false,
          filesWritten: [],
        },
      });
      log.append('stdout', Buffer.from('late'));
      log.closeOutput();
    }, 20);
    expect((await reading).items).toEqual(['stdout:a', 'stdout:b', 'stdout:late']);
  });

  it('stops at the exit when asked: what the background wrote after it is left out', async () => {
    const logs = new ProcessLogs(root, logger);
    const log = start(logs);
    log.append('stdout', Buffer.from('own'));
    log.exited({ failure: { code: 'service_unavailable', message: 'lost' } });
    log.append('stdout', Buffer.from('late'));
    const { items } = await readAll(log, undefined, { follow: true, untilExit: true });
    expect(items).toEqual(['stdout:own']);
    expect(log.meta.state).toBe('lost');
  });

  it('comes back after a restart: ended, a running one lost, its output and end intact', async () => {
    const first = new ProcessLogs(root, logger);
    const log = start(first, 1024, 42);
    log.append('stdout', Buffer.from('before restart'));
    const again = new ProcessLogs(root, logger);
    const found = again.find(SESSION, '42');
    expect(found.meta).toMatchObject({ id: log.meta.id, state: 'lost', outputClosed: true });
    expect(found.position).toEqual({ stdout: 14, stderr: 0 });
    expect((await readAll(found, undefined, { follow: true })).items).toEqual([
      'stdout:before restart',
    ]);
  });

  it('keeps one meta file per process, its newest, written once per turn of the event loop', async () => {
    const first = new ProcessLogs(root, logger);
    const log = start(first, 1024, 42);
    log.append('stdout', Buffer.from('out'));
    log.exited({ failure: { code: 'x', message: 'ended' } });
    log.closeOutput();
    const dir = join(root, SESSION);
    const metas = () => readdirSync(dir).filter((name) => name.endsWith('.json'));
    // Until the turn ends, the meta on disk is the one written at the start.
    expect(metas()).toEqual([`${log.meta.id}.1.json`]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(metas()).toEqual([`${log.meta.id}.2.json`]);
    // Every file a log leaves is one a moving session takes along (the store's filter).
    expect(readdirSync(dir).filter((name) => !LOG_FILE.test(name))).toEqual([]);
    const again = new ProcessLogs(root, logger);
    expect(again.find(SESSION, '42').meta).toMatchObject({
      state: 'lost',
      failure: { message: 'ended' },
      outputClosed: true,
    });
  });

  it('reads the newest meta that parses, and one written by an older agent', async () => {
    const first = new ProcessLogs(root, logger);
    const cut = start(first, 1024, 1);
    const legacy = start(first, 1024, 2);
    const dir = join(root, SESSION);
    // An agent that died while writing a newer meta of `cut`; an older agent's name for `legacy`.
    writeFileSync(join(dir, `${cut.meta.id}.2.json`), '{"id":');
    renameSync(join(dir, `${legacy.meta.id}.1.json`), join(dir, `${legacy.meta.id}.json`));
    const again = new ProcessLogs(root, logger);
    expect(
      again
        .list(SESSION)
        .map((log) => log.meta.id)
        .sort(),
    ).toEqual([cut.meta.id, legacy.meta.id].sort());
    await new Promise((resolve) => setImmediate(resolve));
    // Each was saved again (now lost): one meta file each, the cut one gone.
    expect(
      readdirSync(dir)
        .filter((name) => name.endsWith('.json'))
        .sort(),
    ).toEqual([`${cut.meta.id}.2.json`, `${legacy.meta.id}.1.json`].sort());
    const saved = JSON.parse(readFileSync(join(dir, `${cut.meta.id}.2.json`), 'utf8'));
    expect(saved).toMatchObject({ id: cut.meta.id, state: 'lost' });
  });

  it('finds by the newest of a pid or by id, keeps so many per session, and forgets a session', () => {
    const logs = new ProcessLogs(root, logger, { maxPerSession: 3, keepAfterExitMs: 60_000 });
    const made = [1, 2, 3].map((i) => {
      const log = start(logs, 1024, 7);
      log.exited({ failure: { code: 'x', message: String(i) } });
      log.closeOutput();
      return log;
    });
    expect(logs.find(SESSION, '7').meta.id).toBe(made[2]?.meta.id);
    expect(logs.find(SESSION, made[0]?.meta.id ?? '').meta.id).toBe(made[0]?.meta.id);
    start(logs, 1024, 8);
    expect(logs.list(SESSION).map((l) => l.meta.id)).not.toContain(made[0]?.meta.id);
    expect(codeOf(() => logs.find(SESSION, '99'))).toBe('process_not_found');
    logs.forget(SESSION);
    expect(logs.list(SESSION)).toEqual([]);
  });

  it('goes on without keeping anything once its session is forgotten under a running run', () => {
    const logs = new ProcessLogs(root, logger);
    const log = start(logs, 64);
    log.append('stdout', Buffer.from('kept'));
    logs.forget(SESSION);
    expect(() => {
      for (let i = 0; i < 10; i += 1) log.append('stdout', Buffer.from('x'.repeat(40)));
      log.exited({ failure: { code: 'service_unavailable', message: 'gone' } });
      log.closeOutput();
    }).not.toThrow();
    expect(log.position).toEqual({ stdout: 4, stderr: 0 });
  });
});
