import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { logger, newLog, readAll, SESSION, start, tempDirPerTest } from './process-log-fixtures';
import { newProcessId } from './process-meta';
import { ProcessLogs } from './process-logs';

const root = tempDirPerTest('process-logs-');

describe('ProcessLogs: finding and pruning', () => {
  it('finds by the newest of a pid or by id, keeps so many per session, and forgets a session', () => {
    const logs = new ProcessLogs(root(), logger, { maxPerSession: 3, keepAfterExitMs: 60_000 });
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
    const logs = new ProcessLogs(root(), logger);
    writeFileSync(join(root(), SESSION), 'in the way');
    const unkept = start(logs);
    unkept.append('stdout', Buffer.from('lost'));
    expect((await readAll(unkept)).items).toEqual([]);
    rmSync(join(root(), SESSION));
    const kept = start(logs);
    kept.append('stdout', Buffer.from('kept'));
    expect((await readAll(kept)).items).toEqual(['stdout:kept']);
  });

  it('drops the oldest first after a restart, whatever order the files are read in', async () => {
    const settings = { maxPerSession: 8, keepAfterExitMs: 60_000 };
    const logs = new ProcessLogs(root(), logger, settings);
    const made: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const log = start(logs, 1024, i + 1);
      log.exited({ failure: { code: 'x', message: String(i) } });
      log.closeOutput();
      made.push(log.meta.id);
      await new Promise((resolve) => setTimeout(resolve, 3)); // each started in its own ms
    }
    await new Promise((resolve) => setImmediate(resolve));
    const again = new ProcessLogs(root(), logger, settings);
    expect(again.list(SESSION).map((log) => log.meta.id)).toEqual(made);
    start(again);
    start(again);
    expect(again.list(SESSION).map((log) => log.meta.id)).toEqual(
      expect.arrayContaining(made.slice(2)),
    );
    expect(again.list(SESSION).map((log) => log.meta.id)).not.toContain(made[0]);
    expect(again.list(SESSION).map((log) => log.meta.id)).not.toContain(made[1]);
  });
});

describe('ProcessLogs: keep times and ids', () => {
  it('drops an ended log past its keep time, counted from its last end', () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'], now: 0 });
    try {
      const logs = new ProcessLogs(root(), logger, { maxPerSession: 8, keepAfterExitMs: 1000 });
      const log = start(logs);
      log.closeOutput(); // its runner gone: lost, at 0
      expect(logs.list(SESSION)).toContain(log);
      jest.setSystemTime(900);
      log.exited({ failure: { code: 'x', message: 'said later' } }); // its end, at 900
      jest.setSystemTime(1500);
      expect(logs.list(SESSION)).toContain(log);
      jest.setSystemTime(2000);
      expect(logs.list(SESSION)).not.toContain(log);
    } finally {
      jest.useRealTimers();
    }
  });

  it('drops each log at its own keep time, whatever was looked through before', () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'], now: 0 });
    try {
      const logs = new ProcessLogs(root(), logger, { maxPerSession: 8, keepAfterExitMs: 1000 });
      const first = start(logs);
      first.closeOutput(); // lost at 0: kept until 1000
      expect(logs.list(SESSION)).toEqual([first]);
      jest.setSystemTime(100);
      const running = start(logs); // runs on: never dropped, however old
      jest.setSystemTime(200);
      const second = start(logs);
      jest.setSystemTime(300);
      second.closeOutput(); // kept until 1300
      expect(logs.list(SESSION)).toEqual([first, running, second]);
      jest.setSystemTime(1001);
      expect(logs.list(SESSION)).toEqual([running, second]);
      jest.setSystemTime(1300);
      expect(logs.list(SESSION)).toEqual([running, second]);
      jest.setSystemTime(1301);
      expect(logs.list(SESSION)).toEqual([running]);
      running.exited({ failure: { code: 'x', message: 'ended' } }); // at 1301, output open
      jest.setSystemTime(2000);
      expect(logs.list(SESSION)).toEqual([running]); // its output still open
      running.closeOutput();
      jest.setSystemTime(2301);
      expect(logs.list(SESSION)).toEqual([running]); // kept until 2301, from its exit
      jest.setSystemTime(2302);
      const third = start(logs);
      expect(logs.list(SESSION)).toEqual([third]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('names each process anew, past the random bytes drawn at a time', () => {
    const made = Array.from({ length: 1500 }, () => newProcessId());
    expect(made.every((id) => /^proc_[a-f0-9]{16}$/.test(id))).toBe(true);
    expect(new Set(made).size).toBe(made.length);
  });
});

describe('ProcessLogs: reusing files', () => {
  it("gives a pruned process's file to the next one, emptied, unless someone reads it", async () => {
    const logs = new ProcessLogs(root(), logger, { maxPerSession: 2, keepAfterExitMs: 60_000 });
    const dir = join(root(), SESSION);
    const ended = (text: string) => {
      const log = start(logs);
      log.append('stdout', Buffer.from(text));
      log.exited({ failure: { code: 'x', message: text } });
      log.closeOutput();
      return log;
    };
    const first = ended('first');
    ended('second');
    logs.flush(); // their files made
    const firstFile = join(dir, `${first.meta.id}.0.log`);
    const firstInode = statSync(firstFile).ino;
    // Ended a while ago: its file goes to the spares, for any session (one that just ended
    // goes to its session's next log: below).
    const later = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + 10_000);
    const third = start(logs);
    third.append('stdout', Buffer.from('third'));
    // Gone from the session at once, from its directory off the run's path; emptied, then a
    // spare.
    expect(logs.list(SESSION).map((log) => log.meta.id)).not.toContain(first.meta.id);
    expect(existsSync(firstFile)).toBe(true);
    logs.flush();
    later.mockRestore();
    expect(existsSync(firstFile)).toBe(false);
    await logs.emptied();
    const taker = start(logs, 1024, 1, 'ses_other');
    taker.append('stdout', Buffer.from('taker'));
    logs.flush();
    const takerFile = join(root(), 'ses_other', `${taker.meta.id}.0.log`);
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
    logs.flush();
    expect(statSync(join(dir, `${fourth.meta.id}.0.log`)).ino).not.toBe(oldestInode);
    release();
    await reading; // ends: the log was removed under it
    expect(items).toEqual(['second']);
  });
});

describe('ProcessLogs: files kept for later logs', () => {
  it("keeps a forgotten session's files, emptied, for the next logs of any session, across a restart", async () => {
    const logs = new ProcessLogs(root(), logger);
    const inodes = new Set<number>();
    for (const text of ['one', 'two']) {
      const log = start(logs);
      log.append('stdout', Buffer.from(`secret ${text}`));
      log.exited({ failure: { code: 'x', message: text } });
      log.closeOutput();
      logs.flush();
      inodes.add(statSync(join(root(), SESSION, `${log.meta.id}.0.log`)).ino);
    }
    logs.forget(SESSION);
    expect(existsSync(join(root(), SESSION))).toBe(false);
    await logs.emptied();
    const other = (from: ProcessLogs) => start(from, 1024, 1, 'ses_other');
    const next = other(logs);
    logs.flush();
    const nextFile = join(root(), 'ses_other', `${next.meta.id}.0.log`);
    expect(inodes.has(statSync(nextFile).ino)).toBe(true);
    expect(readFileSync(nextFile).includes('secret')).toBe(false);
    expect((await readAll(next)).items).toEqual([]);
    // An agent started again takes the spare that is left.
    const again = new ProcessLogs(root(), logger);
    const after = other(again);
    again.flush();
    const afterFile = join(root(), 'ses_other', `${after.meta.id}.0.log`);
    expect(inodes.has(statSync(afterFile).ino)).toBe(true);
    expect(again.list('ses_other').map((log) => log.meta.id)).toContain(next.meta.id);
  });

  it('makes spare files ahead of need while the node is quiet, and new logs take them', async () => {
    const logs = new ProcessLogs(root(), logger);
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
    const spares = readdirSync(join(root(), '.spare')).map((name) => join(root(), '.spare', name));
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
    logs.flush();
    expect(inodes.has(statSync(join(root(), SESSION, `${log.meta.id}.0.log`)).ino)).toBe(true);
    expect(logs.spareCount).toBe(2);
    stop.abort();
    await stocking;
  });
});

describe('ProcessLogs: reads and records under a log that goes', () => {
  it('ends a read of a log removed under it', async () => {
    const logs = new ProcessLogs(root(), logger);
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
    const log = newLog(root());
    log.append('stdout', Buffer.from('secret'));
    log.exited({ failure: { code: 'x', message: 'done' } });
    log.closeOutput();
    log.flush();
    const dir = join(root(), SESSION);
    const other = 'proc_00000000000000ff';
    renameSync(join(dir, `${log.meta.id}.0.log`), join(dir, `${other}.0.log`));
    const again = new ProcessLogs(root(), logger);
    expect(again.list(SESSION)).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('goes on without keeping anything once its session is forgotten under a running run', () => {
    const logs = new ProcessLogs(root(), logger);
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

describe("ProcessLogs: a pruned log's file", () => {
  const ended = (logs: ProcessLogs, text: string, sessionId = SESSION) => {
    const log = start(logs, 1024, 1, sessionId);
    log.append('stdout', Buffer.from(text));
    log.exited({ failure: { code: 'x', message: text } });
    log.closeOutput();
    return log;
  };
  const fileOf = (log: ReturnType<typeof start>, sessionId = SESSION) =>
    join(root(), sessionId, `${log.meta.id}.0.log`);

  it('goes to the spares, emptied off the event loop, and reaches a new log only empty', async () => {
    const logs = new ProcessLogs(root(), logger, { maxPerSession: 1, keepAfterExitMs: 60_000 });
    const first = ended(logs, 'first secret');
    logs.flush();
    const firstInode = statSync(fileOf(first)).ino;
    const spares = logs.spareCount;
    // Prunes the first, in the flush that makes the next one's file: not handed to it full, to
    // be emptied on the loop (ADR 54's amendment).
    const next = ended(logs, 'next');
    logs.flush();
    expect(existsSync(fileOf(first))).toBe(false);
    expect(statSync(fileOf(next)).ino).not.toBe(firstInode);
    expect((await readAll(next)).items).toEqual(['stdout:next']);
    await logs.emptied();
    expect(logs.spareCount).toBe(spares + 1);
    // Another session's next log takes it, empty.
    const taker = ended(logs, 'third', 'ses_third');
    logs.flush();
    expect(statSync(fileOf(taker, 'ses_third')).ino).toBe(firstInode);
    expect(readFileSync(fileOf(taker, 'ses_third')).includes('first secret')).toBe(false);
    expect((await readAll(taker)).items).toEqual(['stdout:third']);
    // A restart reads each session's log as its own.
    const restarted = new ProcessLogs(root(), logger);
    expect(restarted.list(SESSION).map((log) => log.meta.id)).toEqual([next.meta.id]);
    expect(restarted.list('ses_third').map((log) => log.meta.id)).toEqual([taker.meta.id]);
  });
});
