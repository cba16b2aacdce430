import { Command, Option } from 'commander';
import { action, UsageError, type Context } from '../context';
import { examples, jsonObject, jsonOption, positiveNumber, secondsToMs } from '../options';
import { outputOf } from '../output';

interface CreateFlags {
  ttl?: number;
  memory?: number;
  cpu?: number;
  runTimeout?: number;
  metadata?: Record<string, unknown>;
  privatePreview?: boolean;
  snapshot?: string;
  json?: boolean;
  timeout?: string;
}

/** `sandbox create`: a new session; its id on stdout, its preview (and token) on stderr. */
export function createCommand(ctx: Context): Command {
  return (
    new Command('create')
      .summary('create a session; prints its id')
      .description(
        'Create a session. Prints its id on stdout (SID=$(sandbox create) keeps it) and its ' +
          'preview URL on stderr, with the header a private preview needs (shown only here).',
      )
      .option('--ttl <seconds>', "the session's lifetime (default 86400)", positiveNumber)
      .option('--memory <mb>', 'memory limit in MB (paid plans)', positiveNumber)
      .option('--cpu <cores>', 'CPU limit in cores, e.g. 0.5 (paid plans)', positiveNumber)
      .option(
        '--run-timeout <seconds>',
        "the default timeout of the session's runs, 1 to 300 (paid plans; default 30)",
        positiveNumber,
      )
      .option('--metadata <json>', 'a JSON object kept with the session', jsonObject)
      .option(
        '--snapshot <id>',
        "start with a snapshot's files (snap_…); unset options come from its session",
      )
      .addOption(new Option('--private-preview', 'the preview needs the X-Preview-Token header'))
      .addOption(jsonOption('{sessionId, previewUrl, previewToken}'))
      // Renamed: --timeout read as the session's lifetime by some, as the runs' by others.
      .addOption(new Option('--timeout <seconds>').hideHelp())
      .addHelpText(
        'after',
        examples(
          'sandbox create --ttl 3600 --metadata \'{"job":"build-42"}\'',
          'sandbox create --memory 2048 --run-timeout 120 --json',
          'sandbox create --snapshot snap_…',
        ),
      )
      .action(
        action(ctx, async (flags: CreateFlags) => {
          if (flags.timeout !== undefined) {
            throw new UsageError(
              "create's --timeout is now --run-timeout (the default timeout of the session's " +
                "runs); the session's lifetime is --ttl",
            );
          }
          const { memory, cpu, runTimeout } = flags;
          const limited = memory !== undefined || cpu !== undefined || runTimeout !== undefined;
          const sandbox = await ctx.api().create({
            ttlMs: secondsToMs(flags.ttl),
            metadata: flags.metadata,
            resourceLimits: limited ? { memory, cpu, timeout: runTimeout } : undefined,
            preview: flags.privatePreview === true ? { private: true } : undefined,
            ...(flags.snapshot === undefined ? {} : { snapshotId: flags.snapshot }),
          });
          const session = {
            sessionId: sandbox.id,
            previewUrl: sandbox.previewUrl(),
            ...(sandbox.previewToken === undefined ? {} : { previewToken: sandbox.previewToken }),
          };
          const out = outputOf(ctx.io, flags.json);
          out.print(session, () => sandbox.id);
          if (out.json) return 0;
          out.note(`preview: ${session.previewUrl}`);
          for (const [name, value] of Object.entries(sandbox.previewHeaders())) {
            out.note(`preview header: ${name}: ${value}`);
          }
          return 0;
        }),
      )
  );
}
