import type { CellError } from '@sandbox/contract';
import type { CellResultBody, ExecutionResult } from './execution-result';

/**
 * A context cell's values and error as events of its stream (issue 43), each its own event
 * before `exit`: `cell_result` for every value (what `display` showed, then the last
 * expression's, `isMain`), then `cell_error` if the cell threw. Named apart from `result` (the
 * stream's last event, the whole result) and `error` (a failure of the request), which old
 * clients already know; the whole result still carries `results` and `error` too.
 */
export type CellEvent =
  | { event: 'cell_result'; data: { type: 'cell_result'; result: CellResultBody } }
  | { event: 'cell_error'; data: { type: 'cell_error'; error: CellError } };

/** The cell events of a result, in order (none for a plain run). */
export function cellEvents(result: ExecutionResult): CellEvent[] {
  const values: CellEvent[] = (result.results ?? []).map((value) => ({
    event: 'cell_result',
    data: { type: 'cell_result', result: value },
  }));
  return result.error === undefined
    ? values
    : [...values, { event: 'cell_error', data: { type: 'cell_error', error: result.error } }];
}

/** The mark of the `n`-th cell event (from 1) in its id: `<processId>:<out>:<err>:cell<n>`. */
export function cellMark(n: number): `cell${number}` {
  return `cell${n}`;
}

/**
 * How many cell events a reader resuming after `mark` already has: all of them after `exit`,
 * `n` after `cell<n>`, none after output.
 */
export function cellEventsSent(mark: string | undefined): number {
  if (mark === undefined) return 0;
  if (mark === 'exit' || mark === 'end') return Number.POSITIVE_INFINITY;
  return Number(mark.slice('cell'.length));
}
