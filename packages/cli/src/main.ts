import { OUTCOMES } from './exit-codes';
import { runCli } from './run-cli';

/*
 * The `sandbox` process: its own streams, arguments and signals. A first Ctrl-C goes to the
 * command that listens (run and exec kill their run, run deletes its session); a second one,
 * or one while nothing listens, ends the process at once.
 */
const listeners = new Set<() => void>();
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted || listeners.size === 0) process.exit(OUTCOMES.interrupted.code);
  interrupted = true;
  for (const listener of listeners) listener();
});

// A reader that went away (`sandbox ls | head -1`) is not a failure.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

runCli(process.argv.slice(2), {
  env: process.env,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  onInterrupt: (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sandbox: ${String(err)}\n`);
    process.exitCode = OUTCOMES.failure.code;
  },
);
