import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nextPollDelayMs, UsagePoller } from './run-measure';

/** A /proc with the given processes: pid, ppid, state, resident pages, CPU ticks. */
function fakeProc(
  processes: { pid: number; ppid: number; state?: string; pages: number; ticks: number }[],
): string {
  const root = mkdtempSync(join(tmpdir(), 'proc-'));
  for (const p of processes) {
    mkdirSync(join(root, String(p.pid)));
    // Fields from the state on: state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss
    const fields = [p.state ?? 'S', p.ppid, p.pid, 0, 0, 0, 0, 0, 0, 0, 0, p.ticks, 0, 0, 0];
    fields.push(20, 0, 1, 0, 0, 0, p.pages);
    writeFileSync(join(root, String(p.pid), 'stat'), `${p.pid} (a (b) c) ${fields.join(' ')}\n`);
  }
  return root;
}

describe('UsagePoller', () => {
  const proc = fakeProc([
    { pid: 1, ppid: 0, pages: 1000, ticks: 500 },
    { pid: 10, ppid: 1, pages: 100, ticks: 3 }, // the run's leader
    { pid: 11, ppid: 10, pages: 50, ticks: 2 },
    { pid: 12, ppid: 11, state: 'Z', pages: 0, ticks: 9 }, // exited, not reaped
    { pid: 20, ppid: 1, pages: 7000, ticks: 70 }, // someone else's
  ]);

  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('does not read /proc for a run shorter than its first interval', () => {
    const poller = new UsagePoller(10, proc);
    jest.advanceTimersByTime(49);
    poller.stop();
    jest.advanceTimersByTime(1000);
    expect(poller.peakRss).toBe(0);
  });

  it("sums the run's live tree only, from 50 ms on", () => {
    const poller = new UsagePoller(10, proc);
    jest.advanceTimersByTime(50);
    poller.stop();
    expect(poller.peakRss).toBe(150 * 4096);
  });

  it('polls again while the run lasts, keeping the peak, and stops when told', () => {
    const growing = fakeProc([
      { pid: 10, ppid: 1, pages: 100, ticks: 3 },
      { pid: 11, ppid: 10, pages: 50, ticks: 2 },
    ]);
    const poller = new UsagePoller(10, growing);
    jest.advanceTimersByTime(50);
    expect(poller.peakRss).toBe(150 * 4096);
    const grown = fakeProc([
      { pid: 10, ppid: 1, pages: 100, ticks: 8 },
      { pid: 11, ppid: 10, pages: 400, ticks: 2 },
    ]);
    writeFileSync(join(growing, '11', 'stat'), readFileSync(join(grown, '11', 'stat')));
    writeFileSync(join(growing, '10', 'stat'), readFileSync(join(grown, '10', 'stat')));
    jest.advanceTimersByTime(50);
    expect(poller.peakRss).toBe(500 * 4096);
    expect(jest.getTimerCount()).toBe(1);
    poller.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('nextPollDelayMs', () => {
  it('polls every 50 ms while a listing is cheap', () => {
    expect(nextPollDelayMs(0.2)).toBe(50);
  });

  it('spaces polls out so that they take 2% of the runner at most', () => {
    expect(nextPollDelayMs(4)).toBe(200);
    expect(nextPollDelayMs(20)).toBe(1000);
  });
});
