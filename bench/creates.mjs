// The create rows of pnpm bench (bench/bench.mjs): a bare `docker run` as the baseline, creates
// from the warm pool back to back and paced, and creates with no pool (a stack of its own).
import { AS_DEPLOYED, docker, measure, runtime, sleep, startBenchStack } from './lib.mjs';

/** A bare `docker run` of the sandbox image: create and start (the removal is not timed). */
export async function bareDockerRun(image, rounds) {
  const made = [];
  const result = await measure(
    'baseline: docker run (create + start, Engine API)',
    rounds,
    async () => {
      const container = await docker.createContainer({
        Image: image,
        Cmd: ['sleep', 'infinity'],
        User: '1000:1000',
        HostConfig: { Init: true, Memory: 1024 * 2 ** 20, NanoCpus: 0.25e9, ...runtime },
      });
      made.push(container);
      await container.start();
    },
    { warmup: 2 },
  );
  for (const container of made) await container.remove({ force: true }).catch(() => undefined);
  return result;
}

/**
 * The create rows against `stack` (its warm pool, filled in idle time before): `rounds` bounds
 * the baselines, `inARow` creates go back to back, then `gapMs` apart. The sessions made are pushed onto `created`.
 */
export async function createRows(stack, created, { rounds, inARow, gapMs }) {
  const results = [];
  const dockerRun = await bareDockerRun(stack.agentConfig.sandboxImage, rounds);
  results.push(dockerRun);
  const create = async () =>
    created.push(JSON.parse(await stack.api('/sessions/create', {})).sessionId);
  results.push(
    await measure(`session create, ${inARow} back to back (default pool)`, inARow, create, {
      warmup: 0,
      baseline: dockerRun,
    }),
  );
  // Again from a pool with at least its size (refills wait for a pause in requests).
  await stack.poolReady(stack.poolSize, 120_000);
  results.push(
    await measure(`session create, ${inARow} ${gapMs} ms apart (default pool)`, inARow, create, {
      warmup: 0,
      before: () => sleep(gapMs),
      baseline: dockerRun,
    }),
  );
  // Creates without a pool, as before it: a stack of its own.
  const cold = await startBenchStack({ pool: '0', name: 'bench-cold', ...AS_DEPLOYED });
  try {
    results.push(
      await measure(
        'session create (no pool)',
        Math.min(rounds, 10),
        async () => created.push(JSON.parse(await cold.api('/sessions/create', {})).sessionId),
        { warmup: 2, baseline: dockerRun },
      ),
    );
  } finally {
    await cold.stop();
  }
  return results;
}
