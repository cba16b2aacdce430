import { serve } from './runner';

serve(process.stdin, process.stdout).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`runner failed: ${String(err)}\n`);
    process.exit(1);
  },
);
