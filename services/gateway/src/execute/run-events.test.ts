import { RunEvents } from './run-events';
import type { ExecutionResult } from './execution-result';

const process = { id: 'proc_0123456789abcdef', pid: 42 };
const result: ExecutionResult = {
  stdout: 'hé\n',
  stderr: '',
  exitCode: 0,
  executionTime: 5,
  memoryUsed: 1,
  cpuTime: 1,
  timedOut: false,
};

function recorder(): { events: RunEvents; sent: { event: string; data: unknown; id: string }[] } {
  const sent: { event: string; data: unknown; id: string }[] = [];
  const events = new RunEvents((event, data, id) => {
    sent.push({ event, data, id });
    return true;
  });
  return { events, sent };
}

describe('the events of a streamed run', () => {
  it('says started once, first, when the node announces the process (a run without stdin too)', () => {
    const { events, sent } = recorder();
    events.started(process);
    events.output('stdout', Buffer.from('hé\n'), { process, at: { stdout: 4, stderr: 0 } });
    events.started(process);
    events.finish(result);
    expect(sent).toEqual([
      {
        event: 'started',
        data: { type: 'started', pid: 42, processId: process.id },
        id: `${process.id}:0:0`,
      },
      { event: 'stdout', data: { type: 'stdout', data: 'hé\n' }, id: `${process.id}:4:0` },
      { event: 'exit', data: { type: 'exit', code: 0 }, id: `${process.id}:4:0:exit` },
      { event: 'result', data: result, id: `${process.id}:4:0:end` },
    ]);
  });

  it('says started before the first output when the output names the process first', () => {
    const { events, sent } = recorder();
    events.output('stderr', Buffer.from('x'), { process, at: { stdout: 0, stderr: 1 } });
    expect(sent.map((e) => [e.event, e.id])).toEqual([
      ['started', `${process.id}:0:0`],
      ['stderr', `${process.id}:0:1`],
    ]);
  });

  it('says started before exit for a silent run named only by its result', () => {
    const { events, sent } = recorder();
    events.started(process); // what the route does with the process the result names
    events.finish({ ...result, stdout: '' });
    expect(sent.map((e) => e.event)).toEqual(['started', 'exit', 'result']);
  });

  it('numbers the events of a run that never got a process (a failed install)', () => {
    const { events, sent } = recorder();
    events.output('stderr', Buffer.from('install failed\n'));
    events.finish({ ...result, exitCode: 1 });
    expect(sent.map((e) => [e.event, e.id])).toEqual([
      ['stderr', '1'],
      ['exit', '2'],
      ['result', '3'],
    ]);
    expect(events.current).toBeUndefined();
    expect(events.lastId()).toBe('4');
  });
});

describe('the events of a streamed run: partial characters and context cells', () => {
  it('holds a character cut between chunks for its rest, and reports a full buffer', () => {
    const sent: string[] = [];
    const events = new RunEvents((_event, data) => {
      sent.push((data as { data: string }).data);
      return false;
    });
    const bytes = Buffer.from('é');
    expect(events.output('stdout', bytes.subarray(0, 1))).toBe(true); // nothing sent yet
    expect(events.output('stdout', bytes.subarray(1))).toBe(false);
    expect(sent).toEqual(['é']);
  });

  it("sends a context cell's values and error as events of their own before exit", () => {
    const { events, sent } = recorder();
    events.started(process);
    const shown = { 'text/html': '<b>hi</b>', 'text/plain': '[text/html]', isMain: false };
    const main = { 'text/plain': '2', 'application/json': '2', isMain: true };
    const error = { name: 'Error', message: 'no', stack: 'Error: no\n    at <cell-1>:1:7' };
    const cell = { ...result, stdout: '', exitCode: 1, results: [shown, main], error };
    events.finish(cell);
    expect(sent.slice(1)).toEqual([
      {
        event: 'cell_result',
        data: { type: 'cell_result', result: shown },
        id: `${process.id}:0:0:cell1`,
      },
      {
        event: 'cell_result',
        data: { type: 'cell_result', result: main },
        id: `${process.id}:0:0:cell2`,
      },
      { event: 'cell_error', data: { type: 'cell_error', error }, id: `${process.id}:0:0:cell3` },
      { event: 'exit', data: { type: 'exit', code: 1 }, id: `${process.id}:0:0:exit` },
      { event: 'result', data: cell, id: `${process.id}:0:0:end` },
    ]);
  });
});
