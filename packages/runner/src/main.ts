import { frontParent } from './front-parent';
import { becomeRunner } from './identity';
import { serve } from './runner';

/**
 * The runner's Node, started by the runner's front (ADR 34), which holds the agent's link
 * (ADR 33) and serves command runs itself (ADR 47): this runner serves the front's other
 * requests over stdio.
 */
const front = frontParent();

becomeRunner();
serve(process.stdin, process.stdout, front === undefined ? {} : { front }).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`runner failed: ${String(err)}\n`);
    process.exit(1);
  },
);
