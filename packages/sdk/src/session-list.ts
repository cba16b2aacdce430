import type { SessionPage } from './types.js';

/** One session as the list shows it. */
export type SessionSummary = SessionPage['data'][number];

/** The largest page the API gives. */
const MAX_PAGE = 100;

/**
 * The account's sessions, newest first: `for await (const session of Sandbox.list())` reads
 * every page in turn (`limit` sessions a page, 100 by default), a session listed twice (moved
 * down a page by one created meanwhile) given once. It is also a promise of one page, as
 * `Sandbox.list` was before it could be iterated: `await Sandbox.list({ limit, offset })`
 * (prefer `Sandbox.listPage` for that).
 */
export class SessionList implements AsyncIterable<SessionSummary>, Promise<SessionPage> {
  readonly [Symbol.toStringTag] = 'SessionList';

  /** @internal Made by `Sandbox.list`. */
  constructor(
    private readonly fetchPage: (limit: number | undefined, offset: number) => Promise<SessionPage>,
    private readonly limit: number | undefined,
    private readonly offset: number,
  ) {}

  /** Every page in turn, from `offset`, until the last. */
  async *pages(): AsyncGenerator<SessionPage, void, undefined> {
    let offset = this.offset;
    for (;;) {
      const page = await this.fetchPage(this.limit ?? MAX_PAGE, offset);
      yield page;
      if (!page.pagination.hasMore || page.data.length === 0) return;
      offset += page.data.length;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SessionSummary, void, undefined> {
    const seen = new Set<string>();
    for await (const page of this.pages()) {
      for (const session of page.data) {
        if (seen.has(session.sessionId)) continue;
        seen.add(session.sessionId);
        yield session;
      }
    }
  }

  /** Every session, read to the last page, as one array. */
  async toArray(): Promise<SessionSummary[]> {
    const all: SessionSummary[] = [];
    for await (const session of this) all.push(session);
    return all;
  }

  /**
   * One page (`limit`, default the API's 50, from `offset`): what `await Sandbox.list()`
   * gave before it could be iterated.
   */
  then<T = SessionPage, E = never>(
    onFulfilled?: ((page: SessionPage) => T | PromiseLike<T>) | null,
    onRejected?: ((reason: unknown) => E | PromiseLike<E>) | null,
  ): Promise<T | E> {
    return this.fetchPage(this.limit, this.offset).then(onFulfilled, onRejected);
  }

  /** One page, as `then`; `onRejected` takes its failure. */
  catch<E = never>(
    onRejected?: ((reason: unknown) => E | PromiseLike<E>) | null,
  ): Promise<SessionPage | E> {
    return this.then(undefined, onRejected);
  }

  /** One page, as `then`; `onFinally` runs either way. */
  finally(onFinally?: (() => void) | null): Promise<SessionPage> {
    return this.then().finally(onFinally);
  }
}
