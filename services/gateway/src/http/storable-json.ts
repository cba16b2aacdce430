import { AppError } from '@sandbox/errors';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True for text Postgres can store: no NUL, no lone UTF-16 surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes('\0') && !LONE_SURROGATE.test(text);
}

/**
 * Refuses JSON that Postgres cannot store as sent (NUL or lone surrogates in strings or keys;
 * numbers that do not survive a round trip: `1e400` parses to Infinity, integers past 2^53 lose
 * digits) or that nests deeper than `maxDepth`, with 400 invalid_request naming `field`.
 * Iterative, so that hostile nesting cannot exhaust the stack.
 */
export function checkStorableJson(value: unknown, field: string, maxDepth = 32): void {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current === 'string') {
      if (!isStorableText(current)) {
        throw new AppError('invalid_request', `${field} contains a NUL byte or invalid Unicode`, {
          details: { field },
        });
      }
    } else if (typeof current === 'number') {
      if (
        !Number.isFinite(current) ||
        (Number.isInteger(current) && !Number.isSafeInteger(current))
      ) {
        throw new AppError(
          'invalid_request',
          `${field} holds a number that cannot be stored exactly (send it as a string)`,
          { details: { field } },
        );
      }
    } else if (typeof current === 'object' && current !== null) {
      if (depth >= maxDepth) {
        throw new AppError('invalid_request', `${field} nests deeper than ${maxDepth} levels`, {
          details: { field, maxDepth },
        });
      }
      for (const [key, child] of Object.entries(current)) {
        if (!isStorableText(key)) {
          throw new AppError(
            'invalid_request',
            `${field} has a key with a NUL byte or invalid Unicode`,
            {
              details: { field },
            },
          );
        }
        stack.push([child, depth + 1]);
      }
    }
  }
}
