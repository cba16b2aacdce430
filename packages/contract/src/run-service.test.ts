import { EventEmitter } from 'node:events';
import { createLogger } from '@sandbox/logger';
import { stopOnSignals } from './run-service';

const logger = createLogger({ name: 'test', level: 'silent' });

describe('stopOnSignals', () => {
  it('stops once, ignoring the signals that come while it stops, then exits 0', async () => {
    const source = new EventEmitter();
    let finish: () => void = () => undefined;
    let stops = 0;
    const service = {
      stop: () => {
        stops += 1;
        return new Promise<void>((resolve) => (finish = resolve));
      },
    };
    const exits: number[] = [];
    stopOnSignals(source, service, { name: 'agent', logger, exit: (code) => exits.push(code) });
    source.emit('SIGINT', 'SIGINT'); // Ctrl-C
    // A process signalled with no listener left dies at once: the handlers must stay.
    expect([source.listenerCount('SIGINT'), source.listenerCount('SIGTERM')]).toEqual([1, 1]);
    source.emit('SIGTERM', 'SIGTERM'); // its supervisor passing it on
    source.emit('SIGTERM', 'SIGTERM');
    expect(stops).toBe(1);
    expect(exits).toEqual([]);
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(exits).toEqual([0]);
  });

  it('exits 1 when the stop fails', async () => {
    const source = new EventEmitter();
    const exits: number[] = [];
    const service = { stop: () => Promise.reject(new Error('docker went away')) };
    stopOnSignals(source, service, { name: 'agent', logger, exit: (code) => exits.push(code) });
    source.emit('SIGTERM', 'SIGTERM');
    await new Promise((resolve) => setImmediate(resolve));
    expect(exits).toEqual([1]);
  });
});
