import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { RUNNER_FRONT_PATH, RUNNER_LINK_ENV } from '@sandbox/contract/run';

/** Where the agent waits for this runner, and the token that says which launch it is. */
export interface AgentLink {
  path: string;
  token: string;
}

/**
 * The agent's socket and this launch's token, taken out of `env` (the runs inherit the rest of
 * it, never these); undefined when the agent did not ask for a link (it speaks over stdio).
 */
export function takeAgentLink(env: NodeJS.ProcessEnv = process.env): AgentLink | undefined {
  const path = env[RUNNER_LINK_ENV.socket];
  const token = env[RUNNER_LINK_ENV.token];
  delete env[RUNNER_LINK_ENV.socket];
  delete env[RUNNER_LINK_ENV.token];
  return path !== undefined && path !== '' && token !== undefined && token !== ''
    ? { path, token }
    : undefined;
}

/**
 * Connects to the agent's socket and says the token first; every request and answer then goes
 * over it. Rejects when the socket cannot be reached (the agent gave up waiting, or the
 * sandbox has no link): the caller serves over stdio instead.
 */
export function openAgentLink(link: AgentLink): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(link.path);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.write(`${link.token}\n`);
      resolve(socket);
    });
  });
}

/**
 * The pid of the runner's front when the front started this runner (it then speaks to the
 * agent, and this runner to it over stdio): the parent, when its command line is the front's.
 * No process of the user's can be the runner's parent.
 */
export function frontParent(parent: number = process.ppid, procRoot = '/proc'): number | undefined {
  let cmdline: string;
  try {
    cmdline = readFileSync(`${procRoot}/${parent}/cmdline`, 'latin1');
  } catch {
    return undefined;
  }
  return cmdline === `${RUNNER_FRONT_PATH}\0` ? parent : undefined;
}
