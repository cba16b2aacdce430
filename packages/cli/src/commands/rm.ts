import { Command } from 'commander';
import { SessionNotFoundError } from '@sandbox/sdk';
import { action, type Api, type Context } from '../context';
import { exitCodeOf } from '../exit-codes';
import { examples, jsonOption } from '../options';
import { errorJson, errorLine, outputOf } from '../output';

/** What `rm` did with each id. */
export interface Removal {
  deleted: string[];
  /** Already gone (expired, deleted before, never made): nothing left to do. */
  missing: string[];
  failed: { sessionId: string; error: unknown }[];
}

/** Deletes each session, going on past those already gone and those that fail. */
export async function removeSessions(api: Api, sessionIds: string[]): Promise<Removal> {
  const removal: Removal = { deleted: [], missing: [], failed: [] };
  for (const sessionId of sessionIds) {
    try {
      await (await api.connect(sessionId)).delete();
      removal.deleted.push(sessionId);
    } catch (error) {
      if (error instanceof SessionNotFoundError) removal.missing.push(sessionId);
      else removal.failed.push({ sessionId, error });
    }
  }
  return removal;
}

/** `sandbox rm SID...`: exit code 0 when every id is gone now, deleted here or before. */
export function rmCommand(ctx: Context): Command {
  return new Command('rm')
    .summary('delete sessions (ids already gone are skipped)')
    .description(
      'Delete sessions and everything in them. Ids already gone are reported and skipped: ' +
        'the exit code is 0 when every id is gone now; else that of the first failure.',
    )
    .argument('<session...>', 'session ids (ses_…)')
    .addOption(jsonOption('{deleted, missing, failed}'))
    .addHelpText(
      'after',
      examples(
        'sandbox rm ses_… ses_…',
        "sandbox ls --json | jq -r '.[].sessionId' | xargs sandbox rm",
      ),
    )
    .action(
      action(ctx, async (sessionIds: string[], flags: { json?: boolean }) => {
        const { deleted, missing, failed } = await removeSessions(ctx.api(), sessionIds);
        const out = outputOf(ctx.io, flags.json);
        out.print(
          {
            deleted,
            missing,
            failed: failed.map(({ sessionId, error }) => ({ sessionId, error: errorJson(error) })),
          },
          () => deleted.map((id) => `deleted ${id}`),
        );
        if (!out.json) {
          for (const id of missing) out.note(`sandbox: ${id} was already gone`);
          for (const { sessionId, error } of failed) out.note(`${errorLine(error)} [${sessionId}]`);
        }
        const [first] = failed;
        return first === undefined ? 0 : exitCodeOf(first.error);
      }),
    );
}
