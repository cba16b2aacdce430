import { Command } from 'commander';
import type { SessionPage } from '@sandbox/sdk';
import { action, type Api, type Context } from '../context';
import { examples, jsonOption } from '../options';
import { outputOf } from '../output';

/** The most sessions the API gives in one page. */
export const PAGE_SIZE = 100;

type SessionSummary = SessionPage['data'][number];

/**
 * Every session of the account, page by page (newest first). A session made or deleted while
 * paging may shift the pages: one seen twice is listed once.
 */
export async function allSessions(api: Api): Promise<SessionSummary[]> {
  const seen = new Map<string, SessionSummary>();
  for (let offset = 0; ;) {
    const page = await api.list({ limit: PAGE_SIZE, offset });
    for (const session of page.data) seen.set(session.sessionId, session);
    if (!page.pagination.hasMore || page.data.length === 0) return [...seen.values()];
    offset += page.data.length;
  }
}

/** `sandbox ls [SID[:DIR]]`: the account's sessions, or a session's files. */
export function lsCommand(ctx: Context): Command {
  return new Command('ls')
    .summary("list the account's sessions, or a session's files")
    .description(
      "List the account's sessions (all of them, page by page), or with SID[:DIR] the files " +
        'of a session (recursively, under /workspace or DIR).',
    )
    .argument('[target]', 'SID or SID:DIR, to list files')
    .addOption(jsonOption('the sessions (an array) or the files ({files, truncated?})'))
    .addHelpText(
      'after',
      examples('sandbox ls | grep idle', 'sandbox ls ses_…:src', 'sandbox ls --json | jq length'),
    )
    .action(
      action(ctx, async (target: string | undefined, flags: { json?: boolean }) => {
        const out = outputOf(ctx.io, flags.json);
        if (target === undefined) {
          const sessions = await allSessions(ctx.api());
          out.print(sessions, () =>
            sessions.map((s) => `${s.sessionId}  ${s.state.padEnd(10)}  expires ${s.expiresAt}`),
          );
          if (sessions.length === 0 && !out.json) out.note('no sessions');
          return 0;
        }
        const at = target.indexOf(':');
        const sessionId = at < 0 ? target : target.slice(0, at);
        const dir = at < 0 ? '' : target.slice(at + 1);
        const sandbox = await ctx.api().connect(sessionId);
        const listed = await sandbox.files.list(dir === '' ? undefined : dir);
        out.print(listed, () =>
          listed.files.map((f) => `${String(f.size).padStart(10)}  ${f.modified}  ${f.path}`),
        );
        if (listed.truncated === true && !out.json) {
          out.note(`sandbox: only the first ${listed.files.length} files are listed`);
        }
        return 0;
      }),
    );
}
