import { loadSandboxctlConfig } from '@sandbox/config';
import { runCli } from './cli';

const config = loadSandboxctlConfig();
runCli(process.argv.slice(2), config, {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`sandboxctl: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
