/** The runner's own files in a sandbox (timings, the zygote's warm-up), private to its user. */
export const RUNNER_DIR = '/tmp/.sandbox-runner';

/** A zygote's sign to the runner that it is warm and waits for its run (`Zygotes.settled`). */
export function zygoteWarmMarker(pid: number): string {
  return `${RUNNER_DIR}/zygote-warm-${pid}`;
}
