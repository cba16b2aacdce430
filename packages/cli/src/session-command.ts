import { Command } from 'commander';
import type { Sandbox } from '@sandbox/sdk';
import { action, type Context } from './context';
import { examples, jsonOption } from './options';
import { outputOf, type Output } from './output';

/** What a command over one session says of itself in --help. */
export interface SessionCommandSpec {
  name: string;
  summary: string;
  description: string;
  /** What --json prints instead. */
  json: string;
  examples: string[];
  /** Adds the command's own arguments (after `<session>`) and options (before --json). */
  configure?: (command: Command) => Command;
}

/** What a session command's body gets: the session (connected when asked), output, flags. */
export interface SessionCall<F> {
  sessionId: string;
  connect: () => Promise<Sandbox>;
  out: Output;
  flags: F;
}

/**
 * A command over one session: its id (`<session>`) first, then the command's own arguments
 * (`A`, given to `run` after the call), its options and `--json`. `run` resolves with the exit
 * code.
 */
export function sessionCommand<F extends { json?: boolean }, A extends unknown[] = []>(
  ctx: Context,
  spec: SessionCommandSpec,
  run: (call: SessionCall<F>, ...args: A) => Promise<number>,
): Command {
  const command = new Command(spec.name)
    .summary(spec.summary)
    .description(spec.description)
    .argument('<session>', 'the session id (ses_…)');
  return (spec.configure?.(command) ?? command)
    .addOption(jsonOption(spec.json))
    .addHelpText('after', examples(...spec.examples))
    .action(
      action(ctx, (sessionId: string, ...rest: unknown[]) => {
        const flags = rest.at(-2) as F;
        const call: SessionCall<F> = {
          sessionId,
          connect: () => ctx.api().connect(sessionId),
          out: outputOf(ctx.io, flags.json),
          flags,
        };
        return run(call, ...(rest.slice(0, -2) as A));
      }),
    );
}
