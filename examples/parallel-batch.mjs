// A batch of runs in parallel with bounded concurrency: 24 snippets over a few sessions,
// at most CONCURRENCY runs at a time, each session running one at a time. Every result is
// kept in input order; a failure of one run does not stop the others.
//
//   SANDBOX_API_URL=… SANDBOX_API_KEY=… node examples/parallel-batch.mjs
import { Sandbox } from '@sandbox/sdk';

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 3);
const jobs = Array.from({ length: 24 }, (_, i) =>
  i === 7 ? 'throw new Error("job 7 fails on purpose")' : `console.log(${i} ** 2)`,
);

const sandboxes = await Promise.all(
  Array.from({ length: CONCURRENCY }, () => Sandbox.create({ metadata: { example: 'batch' } })),
);
try {
  const results = new Array(jobs.length);
  let next = 0;
  // One worker per session: a worker takes the next job until none are left.
  await Promise.all(
    sandboxes.map(async (sandbox) => {
      while (next < jobs.length) {
        const index = next++;
        try {
          const run = await sandbox.run(jobs[index], { timeoutMs: 10_000 });
          results[index] = run.exitCode === 0 ? run.stdout.trim() : `failed (exit ${run.exitCode})`;
        } catch (err) {
          results[index] = `error: ${err.message}`;
        }
      }
    }),
  );
  const failed = results.filter((r) => r.startsWith('failed') || r.startsWith('error')).length;
  console.log(results.map((r, i) => `${i}: ${r}`).join('\n'));
  console.log(`${jobs.length - failed} ok, ${failed} failed, ${CONCURRENCY} at a time`);
} finally {
  await Promise.all(sandboxes.map((sandbox) => sandbox.delete()));
}
