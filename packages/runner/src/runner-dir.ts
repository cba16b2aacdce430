/** The runner's own files in a sandbox (timings, the zygote's warm-up), private to its user. */
export const RUNNER_DIR = '/tmp/.sandbox-runner';
