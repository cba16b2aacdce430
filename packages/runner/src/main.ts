import { becomeRunner } from './identity';
import { serve } from './runner';

becomeRunner();
serve(process.stdin, process.stdout).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`runner failed: ${String(err)}\n`);
    process.exit(1);
  },
);
