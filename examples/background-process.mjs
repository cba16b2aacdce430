// A long-running process in the background: started with a handle, its output followed live,
// then stopped. The process lives on the service, not in this script: leaving the follow loop
// (or this script exiting) does not stop it, and another program can pick it up with
// `sandbox.processes.connect(pid)`.
//
//   SANDBOX_API_URL=… SANDBOX_API_KEY=… node examples/background-process.mjs
import { Sandbox } from '@sandbox/sdk';

const sandbox = await Sandbox.create({ metadata: { example: 'background-process' } });
try {
  const ticker = await sandbox.exec('for i in $(seq 1 300); do echo "tick $i"; sleep 0.2; done', {
    background: true,
    timeoutMs: 30_000,
  });
  console.log(`started: pid ${ticker.pid}, ${ticker.id}`);
  let ticks = 0;
  for await (const event of ticker.follow()) {
    if (event.type === 'stdout') ticks += event.data.split('\n').filter(Boolean).length;
    if (ticks >= 3) break; // stops reading, not the process
  }
  console.log(`after 3 ticks it is ${(await ticker.info()).state}`);
  await ticker.kill();
  const result = await ticker.wait();
  console.log(
    `killed: ${result.exitCode !== 0 ? 'yes' : 'no'}, now ${(await ticker.info()).state}`,
  );
} finally {
  await sandbox.delete();
}
