import type { Command } from 'commander';
import type { Context } from '../context';
import { sessionCommand } from '../session-command';

/** `sandbox info SID`: a session's state, counts and metadata. */
export function infoCommand(ctx: Context): Command {
  const spec = {
    name: 'info',
    summary: "show a session's state, expiry and metadata",
    description: "Show a session's state, expiry, counts and metadata.",
    json: 'the session',
    examples: ['sandbox info ses_…', 'sandbox info ses_… --json | jq .state'],
  };
  return sessionCommand(ctx, spec, async ({ connect, out }) => {
    const info = await (await connect()).info();
    out.print(info, () =>
      Object.entries(info).map(
        ([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
      ),
    );
    return 0;
  });
}
