/**
 * Runs a cell as V8 runs a line of a browser's console: a REPL-mode script (the inspector's
 * `Runtime.evaluate` with `replMode`), through a session of the context's own process. In
 * that mode top-level `await` works, a later cell may declare a `let`, `const` or `class`
 * again, and top-level declarations stay in the global scope for the next cell. The
 * inspector's `timeout` interrupts a cell's synchronous part (an endless loop), and leaves the
 * process and its variables as they were.
 */
import { randomBytes } from 'node:crypto';
import { Session } from 'node:inspector';

/** How a cell's script ended: its completion value, what it threw, or out of time. */
export type Evaluated = { value: unknown } | { thrown: unknown } | { timedOut: true };

interface RemoteObject {
  type: string;
  value?: unknown;
  unserializableValue?: string;
  objectId?: string;
}

interface EvaluateAnswer {
  result: RemoteObject;
  exceptionDetails?: { exception?: RemoteObject; text?: string };
}

/** The inspector's object group of a cell's values: released once they are fetched. */
const GROUP = 'cell';

/** A value the protocol cannot carry as JSON (`NaN`, `-0`, `12n`...). */
function unserializable(text: string): unknown {
  if (text.endsWith('n')) return BigInt(text.slice(0, -1));
  return Number(text); // NaN, Infinity, -Infinity, -0
}

export class ReplEvaluator {
  private readonly session = new Session();
  /** A global, there only while a value is fetched: the name no cell can guess. */
  private readonly receiver = `__cellValue${randomBytes(8).toString('hex')}`;

  constructor() {
    this.session.connect();
  }

  /** Runs `source` (named `filename` in stacks); its value once its top-level awaits settled. */
  evaluate(source: string, filename: string, timeoutMs: number): Promise<Evaluated> {
    const params = {
      expression: `${source}\n//# sourceURL=${filename}`,
      replMode: true,
      silent: true,
      objectGroup: GROUP,
      timeout: Math.max(1, timeoutMs),
    };
    // The cell runs inside `post` (in-process, synchronously): called outside a promise's
    // executor, so that no `new Promise` frame of ours sits under the cell's in its stacks.
    let settle: (outcome: Evaluated) => void = () => undefined;
    const evaluated = new Promise<Evaluated>((resolve) => (settle = resolve));
    this.session.post('Runtime.evaluate', params, (err, answer) => {
      if (err !== null) {
        settle({ timedOut: true }); // the only failure of a valid request: terminated
        return;
      }
      const { result, exceptionDetails } = answer as EvaluateAnswer;
      const outcome: Evaluated =
        exceptionDetails === undefined
          ? { value: this.valueOf(result) }
          : { thrown: this.thrownOf(exceptionDetails) };
      this.session.post('Runtime.releaseObjectGroup', { objectGroup: GROUP });
      settle(outcome);
    });
    return evaluated;
  }

  private thrownOf(details: NonNullable<EvaluateAnswer['exceptionDetails']>): unknown {
    if (details.exception !== undefined) return this.valueOf(details.exception);
    return new Error(details.text ?? 'Uncaught');
  }

  /** The JavaScript value a remote object stands for (objects through a call on them). */
  private valueOf(remote: RemoteObject): unknown {
    if (remote.objectId === undefined) {
      if (remote.type === 'undefined') return undefined;
      if (remote.unserializableValue !== undefined)
        return unserializable(remote.unserializableValue);
      return remote.value;
    }
    let value: unknown;
    Object.defineProperty(globalThis, this.receiver, {
      value: (received: unknown) => (value = received),
      configurable: true,
    });
    try {
      // In-process, the call runs before `post` returns.
      this.session.post('Runtime.callFunctionOn', {
        objectId: remote.objectId,
        functionDeclaration: `function () { 'use strict'; globalThis[${JSON.stringify(this.receiver)}](this); }`,
        silent: true,
      });
    } finally {
      delete (globalThis as Record<string, unknown>)[this.receiver];
    }
    return value;
  }
}
