import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { LOG_FILE } from './log-files';
import { logger, newLog, readAll, SESSION, start, tempDirPerTest } from './process-log-fixtures';
import { ProcessLogs } from './process-logs';

const root = tempDirPerTest('process-logs-');

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

describe('ProcessLog', () => {
  it('hands back the output in order from any position, a record cut where it asks', async () => {
    const log = newLog(root());
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
    const log = newLog(root(), 100);
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
    const log = newLog(root());
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
    const log = newLog(root());
    log.append('stdout', Buffer.from('own'));
    log.exited({ failure: { code: 'service_unavailable', message: 'lost' } });
    log.append('stdout', Buffer.from('late'));
    const { items } = await readAll(log, undefined, { follow: true, untilExit: true });
    expect(items).toEqual(['stdout:own']);
    expect(log.meta.state).toBe('lost');
  });
});

describe('ProcessLog on disk: restarts and its files', () => {
  it('comes back after a restart: ended, a running one lost, its output and end intact', async () => {
    const first = new ProcessLogs(root(), logger);
    const log = start(first, 1024, 42);
    log.append('stdout', Buffer.from('before '));
    first.flush(); // its file made: appends go to it from then on
    log.append('stdout', Buffer.from('restart'));
    const again = new ProcessLogs(root(), logger);
    const found = again.find(SESSION, '42');
    expect(found.meta).toMatchObject({ id: log.meta.id, state: 'lost', outputClosed: true });
    expect(found.position).toEqual({ stdout: 14, stderr: 0 });
    expect((await readAll(found, undefined, { follow: true })).items).toEqual([
      'stdout:before ',
      'stdout:restart',
    ]);
  });

  it('keeps one file per process, its meta a record of it, written once per turn of the event loop', async () => {
    const first = new ProcessLogs(root(), logger);
    const log = start(first, 1024, 42);
    first.flush();
    log.append('stdout', Buffer.from('out'));
    log.exited({ failure: { code: 'x', message: 'ended' } });
    log.closeOutput();
    const dir = join(root(), SESSION);
    const segment = join(dir, `${log.meta.id}.0.log`);
    // One file, made once: no meta file beside it.
    expect(readdirSync(dir)).toEqual([`${log.meta.id}.0.log`]);
    // Until the turn ends, the meta in it is the one written when it was made.
    expect(metaRecords(segment).map((meta) => meta.state)).toEqual(['running']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(metaRecords(segment).map((meta) => meta.state)).toEqual(['running', 'lost']);
    // Every file a log leaves is one a moving session takes along (the store's filter).
    expect(readdirSync(dir).filter((name) => !LOG_FILE.test(name))).toEqual([]);
    const again = new ProcessLogs(root(), logger);
    const found = again.find(SESSION, '42');
    expect(found.meta).toMatchObject({
      state: 'lost',
      failure: { message: 'ended' },
      outputClosed: true,
    });
    // The meta records are not output.
    expect((await readAll(found, undefined, { follow: true })).items).toEqual(['stdout:out']);
  });
});

describe("ProcessLog: its file made off the run's path", () => {
  it("writes a short run's whole log in one write, after the turn that answered it", async () => {
    const logs = new ProcessLogs(root(), logger);
    const log = start(logs, 1024, 9);
    log.append('stdout', Buffer.from('quick'));
    log.exited({ failure: { code: 'x', message: 'done' } });
    log.closeOutput();
    const dir = join(root(), SESSION);
    const files = () => (existsSync(dir) ? readdirSync(dir) : []);
    expect(files()).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve)); // the answer's status leaves
    expect(files()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(files()).toEqual([`${log.meta.id}.0.log`]);
    // One meta, the final one, after the output: nothing cut short, nothing said twice.
    expect(metaRecords(join(dir, files()[0] ?? '')).map((meta) => meta.state)).toEqual(['lost']);
    const found = new ProcessLogs(root(), logger).find(SESSION, '9');
    expect(found.meta).toMatchObject({ state: 'lost', failure: { message: 'done' } });
    expect((await readAll(found)).items).toEqual(['stdout:quick']);
  });

  it("makes a running run's file at the next turn, an ended one's only a turn later", async () => {
    const logs = new ProcessLogs(root(), logger);
    const running = start(logs, 1024, 1);
    running.append('stdout', Buffer.from('seen by its caller'));
    const ended = start(logs, 1024, 2);
    ended.exited({ failure: { code: 'x', message: 'done' } });
    ended.closeOutput();
    const dir = join(root(), SESSION);
    const files = () => (existsSync(dir) ? readdirSync(dir).sort() : []);
    await new Promise((resolve) => setImmediate(resolve));
    expect(files()).toEqual([`${running.meta.id}.0.log`]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(files()).toEqual([`${running.meta.id}.0.log`, `${ended.meta.id}.0.log`].sort());
    const again = new ProcessLogs(root(), logger);
    expect((await readAll(again.find(SESSION, '1'))).items).toEqual(['stdout:seen by its caller']);
  });

  it('is absent after a restart that came before its file was made, never half there', () => {
    const logs = new ProcessLogs(root(), logger);
    const log = start(logs, 1024, 9);
    log.append('stdout', Buffer.from('unsaved'));
    expect(new ProcessLogs(root(), logger).list(SESSION)).toEqual([]);
  });
});

describe('ProcessLog: meta records, older agents', () => {
  it('reads the newest whole meta record: one cut short, or a segment it does not name, is passed over', async () => {
    const first = new ProcessLogs(root(), logger);
    const cut = start(first, 1024, 1);
    cut.append('stdout', Buffer.from('kept'));
    first.flush();
    const dir = join(root(), SESSION);
    // An agent that died while appending a meta, and one that died after it began a segment.
    appendFileSync(join(dir, `${cut.meta.id}.0.log`), record(3, '{"id":"').subarray(0, 9));
    writeFileSync(join(dir, `${cut.meta.id}.1.log`), record(1, 'unnamed'));
    const again = new ProcessLogs(root(), logger);
    const found = again.find(SESSION, '1');
    expect(found.meta).toMatchObject({ id: cut.meta.id, state: 'lost' });
    expect((await readAll(found, undefined, { follow: true })).items).toEqual(['stdout:kept']);
    expect(readdirSync(dir)).toEqual([`${cut.meta.id}.0.log`]);
  });

  it('cuts off a record an agent left cut short before it appends after it', async () => {
    const first = new ProcessLogs(root(), logger);
    const log = start(first, 1024, 3);
    log.append('stdout', Buffer.from('whole'));
    first.flush();
    const segment = join(root(), SESSION, `${log.meta.id}.0.log`);
    // An agent killed while appending 100 bytes of output, 10 of them written.
    appendFileSync(segment, record(1, 'x'.repeat(100)).subarray(0, 15));
    const again = new ProcessLogs(root(), logger);
    await new Promise((resolve) => setImmediate(resolve));
    // The meta saved now (lost) follows the whole records, where a reader finds it.
    expect(metaRecords(segment).map((meta) => meta.state)).toEqual(['running', 'lost']);
    expect((await readAll(again.find(SESSION, '3'))).items).toEqual(['stdout:whole']);
    expect(new ProcessLogs(root(), logger).find(SESSION, '3').meta.state).toBe('lost');
  });

  it('takes no meta record whose segments are not plain numbers (they name files)', () => {
    const first = new ProcessLogs(root(), logger);
    const log = start(first, 1024, 4);
    first.flush();
    const segment = join(root(), SESSION, `${log.meta.id}.0.log`);
    for (const seq of ['../../victim', -1, 1.5]) {
      const forged = { ...log.meta, label: 'forged', segments: [{ seq, start: log.position }] };
      appendFileSync(segment, record(3, JSON.stringify(forged)));
    }
    const found = new ProcessLogs(root(), logger).find(SESSION, '4');
    expect(found.meta).toMatchObject({ label: 'echo hi', segments: [{ seq: 0 }] });
  });
});

describe("ProcessLog: an older agent's files", () => {
  it("reads an older agent's log (meta files of their own) and keeps it as a record from then on", async () => {
    const dir = join(root(), SESSION);
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
    const logs = new ProcessLogs(root(), logger);
    const found = logs.find(SESSION, id);
    expect(found.meta).toMatchObject({ label: 'echo old', state: 'lost', outputClosed: true });
    expect(found.position).toEqual({ stdout: 4, stderr: 3 });
    await new Promise((resolve) => setImmediate(resolve));
    // Saved (now lost) as a record of its segment: its meta files are gone.
    expect(readdirSync(dir)).toEqual([`${id}.0.log`]);
    expect(metaRecords(join(dir, `${id}.0.log`)).at(-1)).toMatchObject({ state: 'lost' });
    const again = new ProcessLogs(root(), logger);
    expect((await readAll(again.find(SESSION, id))).items).toEqual(['stdout:old ', 'stderr:err']);
  });
});
