import { BUSY_GRACE, nodeHealth } from './node-health';

describe('nodeHealth', () => {
  const downAfterMs = 1000;
  it.each([
    ['answered within downAfterMs', { lastOkAt: 9_500, checked: true, slow: false }, 'up'],
    [
      'silent past downAfterMs, connection lost',
      { lastOkAt: 8_000, checked: true, slow: false },
      'down',
    ],
    [
      'silent past downAfterMs, connected but late',
      { lastOkAt: 8_000, checked: true, slow: true },
      'up',
    ],
    [
      'late past the busy grace',
      { lastOkAt: 10_000 - downAfterMs * BUSY_GRACE - 1, checked: true, slow: true },
      'down',
    ],
    ['never answered, asked', { checked: true, slow: true }, 'down'],
    ['not asked yet', { checked: false, slow: false }, 'unknown'],
  ] as const)('%s', (_name, record, health) => {
    expect(nodeHealth(record, 10_000, downAfterMs)).toBe(health);
  });
});
