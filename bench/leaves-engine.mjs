// What bench/network-leaves.mjs and network-leaves-churn.mjs share: the engine they talk to
// (LEAVES_SOCKET, or the node's), the agent's container client over it, and the sleeping
// containers they make on a network of their own, labelled sandbox-bench.leaves=<run id>.
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';

const require = createRequire(import.meta.url);
const Docker = require('../services/agent/node_modules/dockerode');
const {
  DockerodeContainerClient,
  SerialNetworkLeaves,
} = require('../services/agent/dist/index.js');
const { createLogger } = require('../packages/logger/dist/index.js');

export { SerialNetworkLeaves };
export const LABEL = 'sandbox-bench.leaves';
export const SOCKET = process.env.LEAVES_SOCKET ?? '/var/run/docker.sock';
export const WEDGED_MS = Number(process.env.LEAVES_WEDGED_MS ?? 20000);
const IMAGE = process.env.LEAVES_IMAGE ?? process.env.SANDBOX_IMAGE ?? 'sandbox-runtime:latest';

/** The engine, the agent's client of it, and this run's id and network name (`prefix-<id>`). */
export function leavesEngine(prefix) {
  const docker = new Docker({ socketPath: SOCKET });
  const logger = createLogger({ name: prefix, level: 'warn' });
  const runId = randomBytes(4).toString('hex');
  const client = new DockerodeContainerClient(docker, logger);
  return { docker, logger, client, runId, network: `${prefix}-${runId}` };
}

/** Creates and starts a container named `name` that sleeps on `network`; its id. */
export async function startSleeper({ docker, runId, network }, name) {
  const container = await docker.createContainer({
    name,
    Image: IMAGE,
    Entrypoint: ['sleep'],
    Cmd: ['infinity'],
    Labels: { [LABEL]: runId },
    HostConfig: { NetworkMode: network },
  });
  await container.start();
  return container.id;
}
