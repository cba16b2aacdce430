import { createReadStream } from 'node:fs';
import { Command, Option } from 'commander';
import type { Sandbox } from '@sandbox/sdk';
import { action, type Context } from '../context';
import { OUTCOMES } from '../exit-codes';
import { examples, runOptionsOf, withRunOptions, type RunFlags } from '../options';
import { outputOf, type Output } from '../output';
import { interruptSignal, streamRun, type StreamOptions } from '../run-stream';

interface RunFileFlags extends RunFlags {
  session?: string;
  keep?: boolean;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** `sandbox run FILE|-`: JavaScript or TypeScript, in a session or a throwaway one. */
export function runCommand(ctx: Context): Command {
  return withRunOptions(
    new Command('run')
      .summary('run a JavaScript/TypeScript file, in a throwaway session by default')
      .description(
        'Run a JavaScript or TypeScript file (- : standard input) in the session given, or in a ' +
          'new session deleted afterwards, also at Ctrl-C (kept with --keep). Output streams ' +
          "live; exits with the run's exit code (124: it timed out; 130: Ctrl-C killed it).",
      )
      .argument('<file>', 'the file to run, or - for standard input')
      .option('--session <id>', 'run in this session (ses_…) instead of a new one')
      .addOption(
        new Option('--keep', 'keep the new session (its id on stderr)').conflicts('session'),
      ),
  )
    .addHelpText(
      'after',
      examples(
        'sandbox run hello.ts',
        "echo 'console.log(1 + 1)' | sandbox run --session ses_… --timeout 10 -",
        'sandbox run --env MODE=test --json job.js | jq .exitCode',
      ),
    )
    .action(
      action(ctx, async (file: string, flags: RunFileFlags) => {
        const code = await readAll(file === '-' ? ctx.io.stdin : createReadStream(file));
        const options = runOptionsOf(flags);
        const out = outputOf(ctx.io, flags.json);
        const interrupt = interruptSignal(ctx.io);
        try {
          if (flags.session !== undefined) {
            const sandbox = await ctx.api().connect(flags.session);
            return await streamRun(sandbox, { code }, options, ctx.io, out, interrupt.signal);
          }
          return await runThrowaway(ctx, code, options, out, interrupt.signal, flags.keep === true);
        } finally {
          interrupt.dispose();
        }
      }),
    );
}

/** Runs `code` in a new session, deleted afterwards (whatever happened) unless `keep`. */
async function runThrowaway(
  ctx: Context,
  code: string,
  options: StreamOptions,
  out: Output,
  interrupt: AbortSignal,
  keep: boolean,
): Promise<number> {
  // Not aborted by Ctrl-C: a create cut off may still have made the session, to delete.
  const sandbox: Sandbox = await ctx.api().create({});
  try {
    if (interrupt.aborted) return OUTCOMES.interrupted.code;
    return await streamRun(sandbox, { code }, options, ctx.io, out, interrupt);
  } finally {
    if (keep) out.note(`sandbox: kept ${sandbox.id}`);
    else await sandbox.delete();
  }
}
