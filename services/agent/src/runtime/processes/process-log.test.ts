import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@sandbox/logger';
import { LOG_FILE } from './log-files';
import type { LogItem, OutputPosition } from './process-meta';
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

/** A record of a segment, as the log writes them: kind, length, bytes. */
function record(kind: number, text: string): Buffer {
  const body = Buffer.from(text);
  const header = Buffer.alloc(5);
  header.writeUInt8(kind, 0);
  header.writeUInt32LE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** The metas recorded in a segment file, oldest first. */
function metaRecords(path: string): { state: string }[] {
  const data = readFileSync(path);
  const metas: { state: string }[] = [];
  for (let at = 0; at + 5 <= data.length;) {
    const length = data.readUInt32LE(at + 1);
    if (data.readUInt8(at) === 3) {
      metas.push(
        JSON.parse(data.subarray(at + 5, at + 5 + length).toString()) as { state: string },
      );
    }
    at += 5 + length;
  }
  return metas;
}

/** The `code` of what `fn` throws. */
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

  it('keeps one file per process, its meta a record of it, written once per turn of the event loop', async () => {
    const first = new ProcessLogs(root, logger);
    const log = start(first, 1024, 42);
    log.append('stdout', Buffer.from('out'));
    log.exited({ failure: { code: 'x', message: 'ended' } });
    log.closeOutput();
    const dir = join(root, SESSION);
    const segment = join(dir, `${log.meta.id}.0.log`);
    // One file, made once: no meta file beside it.
    expect(readdirSync(dir)).toEqual([`${log.meta.id}.0.log`]);
    // Until the turn ends, the meta in it is the one written at the start.
    expect(metaRecords(segment).map((meta) => meta.state)).toEqual(['running']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(metaRecords(segment).map((meta) => meta.state)).toEqual(['running', 'lost']);
    // Every file a log leaves is one a moving session takes along (the store's filter).
    expect(readdirSync(dir).filter((name) => !LOG_FILE.test(name))).toEqual([]);
    const again = new ProcessLogs(root, logger);
    const found = again.find(SESSION, '42');
    expect(found.meta).toMatchObject({
      state: 'lost',
      failure: { message: 'ended' },
      outputClosed: true,
    });
    // The meta records are not output.
    expect((await readAll(found, undefined, { follow: true })).items).toEqual(['stdout:out']);
  });

  it('reads the newest whole meta record: one cut short, or a segment it does not name, is passed over', async () => {
    const first = new ProcessLogs(root, logger);
    const cut = start(first, 1024, 1);
    cut.append('stdout', Buffer.from('kept'));
    const dir = join(root, SESSION);
    // An agent that died while appending a meta, and one that died after it began a segment.
    appendFileSync(join(dir, `${cut.meta.id}.0.log`), record(3, '{"id":"').subarray(0, 9));
    writeFileSync(join(dir, `${cut.meta.id}.1.log`), record(1, 'unnamed'));
    const again = new ProcessLogs(root, logger);
    const found = again.find(SESSION, '1');
    expect(found.meta).toMatchObject({ id: cut.meta.id, state: 'lost' });
    expect((await readAll(found, undefined, { follow: true })).items).toEqual(['stdout:kept']);
    expect(readdirSync(dir)).toEqual([`${cut.meta.id}.0.log`]);
  });

  it('cuts off a record an agent left cut short before it appends after it', async () => {
    const first = new ProcessLogs(root, logger);
    const log = start(first, 1024, 3);
    log.append('stdout', Buffer.from('whole'));
    const segment = join(root, SESSION, `${log.meta.id}.0.log`);
    // An agent killed while appending 100 bytes of output, 10 of them written.
    appendFileSync(segment, record(1, 'x'.repeat(100)).subarray(0, 15));
    const again = new ProcessLogs(root, logger);
    await new Promise((resolve) => setImmediate(resolve));
    // The meta saved now (lost) follows the whole records, where a reader finds it.
    expect(metaRecords(segment).map((meta) => meta.state)).toEqual(['running', 'lost']);
    expect((await readAll(again.find(SESSION, '3'))).items).toEqual(['stdout:whole']);
    expect(new ProcessLogs(root, logger).find(SESSION, '3').meta.state).toBe('lost');
  });

  it('takes no meta record whose segments are not plain numbers (they name files)', () => {
    const first = new ProcessLogs(root, logger);
    const log = start(first, 1024, 4);
    const segment = join(root, SESSION, `${log.meta.id}.0.log`);
    for (const seq of ['../../victim', -1, 1.5]) {
      const forged = { ...log.meta, label: 'forged', segments: [{ seq, start: log.position }] };
      appendFileSync(segment, record(3, JSON.stringify(forged)));
    }
    const found = new ProcessLogs(root, logger).find(SESSION, '4');
    expect(found.meta).toMatchObject({ label: 'echo hi', segments: [{ seq: 0 }] });
  });

  it("reads an older agent's log (meta files of their own) and keeps it as a record from then on", async () => {
    const dir = join(root, SESSION);
    mkdirSync(dir, { recursive: true });
    const id = 'proc_0123456789abcdef';
    const meta = {
      id,
      pid: 5,
      kind: 'command',
      label: 'echo old',
      startedAt: new Date().toISOString(),
      state: 'running',
      stdin: false,
      stdinBytes: 0,
      outputClosed: false,
      capBytes: 1024,
      segments: [{ seq: 0, start: { stdout: 0, stderr: 0 } }],
    };
    writeFileSync(join(dir, `${id}.0.log`), Buffer.concat([record(1, 'old '), record(2, 'err')]));
    writeFileSync(join(dir, `${id}.1.json`), JSON.stringify({ ...meta, label: 'older' }));
    writeFileSync(join(dir, `${id}.2.json`), JSON.stringify(meta));
    writeFileSync(join(dir, `${id}.3.json`), '{"id":'); // cut short by a dying agent
    // A log with no meta anywhere can never be read: its files go.
    writeFileSync(join(dir, 'proc_ffffffffffffffff.0.log'), record(1, 'lost'));
    const logs = new ProcessLogs(root, logger);
    const found = logs.find(SESSION, id);
    expect(found.meta).toMatchObject({ label: 'echo old', state: 'lost', outputClosed: true });
    expect(found.position).toEqual({ stdout: 4, stderr: 3 });
    await new Promise((resolve) => setImmediate(resolve));
    // Saved (now lost) as a record of its segment: its meta files are gone.
    expect(readdirSync(dir)).toEqual([`${id}.0.log`]);
    expect(metaRecords(join(dir, `${id}.0.log`)).at(-1)).toMatchObject({ state: 'lost' });
    const again = new ProcessLogs(root, logger);
    expect((await readAll(again.find(SESSION, id))).items).toEqual(['stdout:old ', 'stderr:err']);
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
    const notFound: Error = expect.objectContaining({ code: 'process_not_found' });
    expect(() => logs.find(SESSION, '99')).toThrow(notFound);
    logs.forget(SESSION);
    expect(logs.list(SESSION)).toEqual([]);
  });

  it("makes a session's directory again for the next run when making it failed", async () => {
    const logs = new ProcessLogs(root, logger);
    writeFileSync(join(root, SESSION), 'in the way');
    const unkept = start(logs);
    unkept.append('stdout', Buffer.from('lost'));
    expect((await readAll(unkept)).items).toEqual([]);
    rmSync(join(root, SESSION));
    const kept = start(logs);
    kept.append('stdout', Buffer.from('kept'));
    expect((await readAll(kept)).items).toEqual(['stdout:kept']);
  });

  it('drops the oldest first after a restart, whatever order the files are read in', async () => {
    const settings = { maxPerSession: 8, keepAfterExitMs: 60_000 };
    const logs = new ProcessLogs(root, logger, settings);
    const made: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const log = start(logs, 1024, i + 1);
      log.exited({ failure: { code: 'x', message: String(i) } });
      log.closeOutput();
      made.push(log.meta.id);
      await new Promise((resolve) => setTimeout(resolve, 3)); // each started in its own ms
    }
    await new Promise((resolve) => setImmediate(resolve));
    const again = new ProcessLogs(root, logger, settings);
    expect(again.list(SESSION).map((log) => log.meta.id)).toEqual(made);
    start(again);
    start(again);
    expect(again.list(SESSION).map((log) => log.meta.id)).toEqual(
      expect.arrayContaining(made.slice(2)),
    );
    expect(again.list(SESSION).map((log) => log.meta.id)).not.toContain(made[0]);
    expect(again.list(SESSION).map((log) => log.meta.id)).not.toContain(made[1]);
  });

  it("gives a pruned process's file to the next one, emptied, unless someone reads it", async () => {
    const logs = new ProcessLogs(root, logger, { maxPerSession: 2, keepAfterExitMs: 60_000 });
    const dir = join(root, SESSION);
    const ended = (text: string) => {
      const log = start(logs);
      log.append('stdout', Buffer.from(text));
      log.exited({ failure: { code: 'x', message: text } });
      log.closeOutput();
      return log;
    };
    const first = ended('first');
    ended('second');
    await new Promise((resolve) => setImmediate(resolve)); // their metas written
    const firstFile = join(dir, `${first.meta.id}.0.log`);
    const firstInode = statSync(firstFile).ino;
    const third = start(logs);
    third.append('stdout', Buffer.from('third'));
    // Gone from the session at once; emptied off the run's path, then a spare.
    expect(existsSync(firstFile)).toBe(false);
    expect(logs.list(SESSION).map((log) => log.meta.id)).not.toContain(first.meta.id);
    await logs.emptied();
    const taker = logs.start({
      sessionId: 'ses_other',
      pid: 1,
      kind: 'command',
      source: 'x',
      stdin: false,
      capBytes: 1024,
    });
    taker.append('stdout', Buffer.from('taker'));
    const takerFile = join(root, 'ses_other', `${taker.meta.id}.0.log`);
    expect(statSync(takerFile).ino).toBe(firstInode);
    expect(readFileSync(takerFile).includes('first')).toBe(false);
    expect((await readAll(taker)).items).toEqual(['stdout:taker']);
    expect((await readAll(third)).items).toEqual(['stdout:third']);
    // A reader of the oldest holds its file: the next log gets a new one, the read its own.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const oldest = logs.list(SESSION)[0];
    if (oldest === undefined) throw new Error('no log');
    const oldestInode = statSync(join(dir, `${oldest.meta.id}.0.log`)).ino;
    const items: string[] = [];
    const reading = oldest.read(
      { stdout: 0, stderr: 0 },
      async (item) => {
        items.push('data' in item ? item.data.toString() : 'gap');
        await held;
      },
      { follow: false },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    third.exited({ failure: { code: 'x', message: 'third' } });
    third.closeOutput();
    await new Promise((resolve) => setImmediate(resolve));
    const fourth = start(logs);
    expect(statSync(join(dir, `${fourth.meta.id}.0.log`)).ino).not.toBe(oldestInode);
    release();
    await reading; // ends: the log was removed under it
    expect(items).toEqual(['second']);
  });

  it("keeps a forgotten session's files, emptied, for the next logs of any session, across a restart", async () => {
    const logs = new ProcessLogs(root, logger);
    const inodes = new Set<number>();
    for (const text of ['one', 'two']) {
      const log = start(logs);
      log.append('stdout', Buffer.from(`secret ${text}`));
      log.exited({ failure: { code: 'x', message: text } });
      log.closeOutput();
      await new Promise((resolve) => setImmediate(resolve));
      inodes.add(statSync(join(root, SESSION, `${log.meta.id}.0.log`)).ino);
    }
    logs.forget(SESSION);
    expect(existsSync(join(root, SESSION))).toBe(false);
    await logs.emptied();
    const other = (from: ProcessLogs) =>
      from.start({
        sessionId: 'ses_other',
        pid: 1,
        kind: 'command',
        source: 'x',
        stdin: false,
        capBytes: 1024,
      });
    const next = other(logs);
    const nextFile = join(root, 'ses_other', `${next.meta.id}.0.log`);
    expect(inodes.has(statSync(nextFile).ino)).toBe(true);
    expect(readFileSync(nextFile).includes('secret')).toBe(false);
    expect((await readAll(next)).items).toEqual([]);
    // An agent started again takes the spare that is left.
    const again = new ProcessLogs(root, logger);
    const after = other(again);
    const afterFile = join(root, 'ses_other', `${after.meta.id}.0.log`);
    expect(inodes.has(statSync(afterFile).ino)).toBe(true);
    expect(again.list('ses_other').map((log) => log.meta.id)).toContain(next.meta.id);
  });

  it('makes spare files ahead of need while the node is quiet, and new logs take them', async () => {
    const logs = new ProcessLogs(root, logger);
    let busy = true;
    const stop = new AbortController();
    const stocking = logs.stockSpares(() => busy, stop.signal, 3);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(logs.spareCount).toBe(0); // none made while requests are served
    busy = false;
    for (let waited = 0; logs.spareCount < 3 && waited < 2000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(logs.spareCount).toBe(3);
    const spares = readdirSync(join(root, '.spare')).map((name) => join(root, '.spare', name));
    for (const path of spares) {
      const made = statSync(path);
      expect({ file: made.isFile(), size: made.size, mode: made.mode & 0o777 }).toEqual({
        file: true,
        size: 0,
        mode: 0o600,
      });
    }
    const inodes = new Set(spares.map((path) => statSync(path).ino));
    const log = start(logs);
    expect(inodes.has(statSync(join(root, SESSION, `${log.meta.id}.0.log`)).ino)).toBe(true);
    expect(logs.spareCount).toBe(2);
    stop.abort();
    await stocking;
  });

  it('ends a read of a log removed under it', async () => {
    const logs = new ProcessLogs(root, logger);
    const log = start(logs);
    log.append('stdout', Buffer.from('one'));
    log.append('stdout', Buffer.from('two'));
    const items: string[] = [];
    const at = await log.read(
      { stdout: 0, stderr: 0 },
      (item) => {
        items.push('data' in item ? item.data.toString() : 'gap');
        logs.forget(SESSION);
      },
      { follow: true },
    );
    expect(items).toEqual(['one']);
    expect(at).toEqual({ stdout: 3, stderr: 0 });
  });

  it("drops a file holding another process's records under this one's name (a death while one was recycled)", () => {
    const logs = new ProcessLogs(root, logger);
    const log = start(logs);
    log.append('stdout', Buffer.from('secret'));
    log.exited({ failure: { code: 'x', message: 'done' } });
    log.closeOutput();
    const dir = join(root, SESSION);
    const other = 'proc_00000000000000ff';
    renameSync(join(dir, `${log.meta.id}.0.log`), join(dir, `${other}.0.log`));
    const again = new ProcessLogs(root, logger);
    expect(again.list(SESSION)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
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
