import type { Readable, Writable } from 'node:stream';
import { frontParent, openAgentLink, takeAgentLink } from './agent-link';
import { becomeRunner } from './identity';
import { serve } from './runner';

/**
 * Where requests come from and answers go: the agent's socket when the agent asked for it and
 * it can be reached (ADR 33), else stdio (the `docker exec` stream). Connected as root, before
 * the runner takes the sandbox user's effective uid: the socket is closed to that user.
 */
async function channel(): Promise<{ input: Readable; output: Writable }> {
  const stdio = { input: process.stdin, output: process.stdout };
  const link = takeAgentLink();
  if (link === undefined) return stdio;
  try {
    const socket = await openAgentLink(link);
    // The agent ends the exec stream and the socket together: either ends the runner.
    process.stdin.once('end', () => socket.destroy()).resume();
    return { input: socket, output: socket };
  } catch (err) {
    process.stderr.write(`runner: the agent's socket is out of reach (${String(err)}): on stdio\n`);
    return stdio;
  }
}

/** Started by the runner's front (ADR 34): the front holds the agent's link. */
const front = frontParent();

channel()
  .then(({ input, output }) => {
    becomeRunner();
    return serve(input, output, front === undefined ? {} : { front });
  })
  .then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`runner failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
