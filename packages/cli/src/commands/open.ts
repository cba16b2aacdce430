import { Command } from 'commander';
import { action, type Context } from '../context';
import { examples, jsonOption, port } from '../options';
import { outputOf } from '../output';

interface OpenFlags {
  port?: number;
  previewToken?: string;
  json?: boolean;
}

/** `sandbox open SID`: the preview URL, and for a private preview the header to send. */
export function openCommand(ctx: Context): Command {
  return new Command('open')
    .summary('print the preview URL (and the header a private preview needs)')
    .description(
      'Print the preview URL of a web app listening in the session, and for a private preview ' +
        "the header line to send with each request (its token read from the session's info; " +
        '--preview-token for a session made before the service kept it).',
    )
    .argument('<session>', 'the session id (ses_…)')
    .option('--port <port>', 'the port the app listens on in the session (default 3000)', port)
    .option(
      '--preview-token <token>',
      'the private preview token `sandbox create --private-preview` printed (older sessions only)',
    )
    .addOption(jsonOption('{url, headers}'))
    .addHelpText(
      'after',
      examples(
        'sandbox open ses_… --port 8080',
        'curl -H "$(sandbox open ses_… | sed -n 2p)" "$(sandbox open ses_… | head -1)"',
      ),
    )
    .action(
      action(ctx, async (sessionId: string, flags: OpenFlags) => {
        const sandbox = await ctx
          .api()
          .connect(
            sessionId,
            flags.previewToken === undefined ? {} : { previewToken: flags.previewToken },
          );
        const url = sandbox.previewUrl(flags.port);
        const headers = sandbox.previewHeaders();
        outputOf(ctx.io, flags.json).print({ url, headers }, () => [
          url,
          ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        ]);
        return 0;
      }),
    );
}
