import { Command } from 'commander';
import { action, type Context } from '../context';
import { examples, jsonOption } from '../options';
import { outputOf } from '../output';

/** `sandbox info SID`: a session's state, counts and metadata. */
export function infoCommand(ctx: Context): Command {
  return new Command('info')
    .summary("show a session's state, expiry and metadata")
    .description("Show a session's state, expiry, counts and metadata.")
    .argument('<session>', 'the session id (ses_…)')
    .addOption(jsonOption('the session'))
    .addHelpText('after', examples('sandbox info ses_…', 'sandbox info ses_… --json | jq .state'))
    .action(
      action(ctx, async (sessionId: string, flags: { json?: boolean }) => {
        const info = await (await ctx.api().connect(sessionId)).info();
        outputOf(ctx.io, flags.json).print(info, () =>
          Object.entries(info).map(
            ([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
          ),
        );
        return 0;
      }),
    );
}
