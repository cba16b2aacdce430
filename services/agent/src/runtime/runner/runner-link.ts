import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, chown, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { RUNNER_LINK_DIR, RUNNER_LINK_ENV, RUNNER_LINK_SOCKET } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import { DockerFrameParser } from './docker-stream';

/**
 * A runner's requests and answers: lines on `stream`, framed by Docker (its `docker exec`
 * stream) or not (the agent's socket).
 */
export interface RunnerStream {
  stream: Duplex;
  framed: boolean;
}

/** How long a starting runner may take to reach the socket before its exec stream serves. */
export const LINK_TIMEOUT_MS = 15_000;

/** The longest token line a connection may send before it is dropped. */
const MAX_TOKEN_LINE = 256;

export interface LinkOptions {
  /** The sandbox's link directory on the host (bound read-only at RUNNER_LINK_DIR). */
  dir: string;
  /** The host ids of the sandbox's root: the socket is its alone. */
  owner: { uid: number; gid: number };
  /** Starts the runner (`docker exec`) with these `NAME=value` variables; its attach stream. */
  start: (env: string[]) => Promise<Duplex>;
  logger: Logger;
  timeoutMs?: number;
}

/**
 * Starts a runner that speaks over a socket of the agent's rather than through dockerd and
 * the container's shim (ADR 33). The agent listens in the sandbox's link directory, a host
 * directory the container sees read-only (nothing in the sandbox can replace what the agent
 * makes there), with the socket open to the sandbox's root only; starts the runner with the
 * socket's path and a token of this launch; and takes the first connection that says the
 * token, then stops listening. The exec stream stays open beside the socket, for the runner's
 * stderr and its life: either ending ends both. A runner that does not come in time (an image
 * without links) is spoken to over its exec stream instead, as it then is itself.
 */
export async function linkRunner(options: LinkOptions): Promise<RunnerStream> {
  const path = join(options.dir, RUNNER_LINK_SOCKET);
  const token = randomBytes(24).toString('base64url');
  const server = createServer();
  try {
    await listen(server, path, options.owner);
  } catch (err) {
    server.close();
    options.logger.warn({ err }, 'no socket for the runner: speaking over its exec stream');
    return { stream: await options.start([]), framed: true };
  }
  try {
    const exec = await options.start([
      `${RUNNER_LINK_ENV.socket}=${RUNNER_LINK_DIR}/${RUNNER_LINK_SOCKET}`,
      `${RUNNER_LINK_ENV.token}=${token}`,
    ]);
    const socket = await accepted(server, token, exec, options.timeoutMs ?? LINK_TIMEOUT_MS);
    if (socket === undefined) {
      options.logger.warn('the runner did not reach its socket: speaking over its exec stream');
      return { stream: exec, framed: true };
    }
    bind(socket, exec, options.logger);
    return { stream: socket, framed: false };
  } finally {
    server.close();
  }
}

/** Listens at `path`, a socket only `owner` (and the agent) may connect to. */
async function listen(
  server: Server,
  path: string,
  owner: { uid: number; gid: number },
): Promise<void> {
  // What a launch that died here left: the directory is the agent's alone to write in.
  await rm(path, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chown(path, owner.uid, owner.gid);
  await chmod(path, 0o600);
}

/**
 * The first connection to `server` that says `token`, or undefined after `timeoutMs`; rejects
 * when the runner's exec stream ends first (the runner died before it connected). Other
 * connections are dropped: a wrong token at once, one still saying nothing when the wait ends.
 */
function accepted(
  server: Server,
  token: string,
  exec: Duplex,
  timeoutMs: number,
): Promise<Socket | undefined> {
  const expected = Buffer.from(`${token}\n`);
  return new Promise((resolve, reject) => {
    const stderr: Buffer[] = [];
    /** Connections that have not said a whole line yet. */
    const pending = new Set<Socket>();
    const parser = new DockerFrameParser(
      () => undefined,
      (payload) => stderr.push(payload),
    );
    const onData = (chunk: Buffer): void => parser.push(chunk);
    const timer = setTimeout(() => settle(undefined), timeoutMs);
    const onEnd = (): void => {
      const said = Buffer.concat(stderr).toString('utf8').slice(0, 2000).trim();
      settle(new Error(`the runner exited before it reached the agent${said ? `: ${said}` : ''}`));
    };
    function settle(outcome: Socket | Error | undefined): void {
      clearTimeout(timer);
      server.off('connection', onConnection);
      exec.off('data', onData).off('end', onEnd).off('close', onEnd).off('error', onEnd);
      // The runner's own connection left `pending` when it said its line.
      for (const socket of pending) socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    }
    function onConnection(socket: Socket): void {
      let said = Buffer.alloc(0);
      pending.add(socket);
      socket.once('close', () => pending.delete(socket));
      const onBytes = (chunk: Buffer): void => {
        said = Buffer.concat([said, chunk]);
        const end = said.indexOf(0x0a);
        if (end === -1 && said.length < MAX_TOKEN_LINE) return;
        socket.off('data', onBytes);
        pending.delete(socket);
        const line = said.subarray(0, end + 1);
        if (end === -1 || line.length !== expected.length || !timingSafeEqual(line, expected)) {
          socket.destroy();
          return;
        }
        socket.pause();
        if (end + 1 < said.length) socket.unshift(said.subarray(end + 1));
        settle(socket);
      };
      socket.on('data', onBytes);
      socket.on('error', () => socket.destroy());
    }
    server.on('connection', onConnection);
    exec.on('data', onData).once('end', onEnd).once('close', onEnd).once('error', onEnd);
  });
}

/** The socket and the exec stream live and end together; the runner's stderr is logged. */
function bind(socket: Socket, exec: Duplex, logger: Logger): void {
  const log = (payload: Buffer): void =>
    logger.warn({ runner: payload.toString('utf8').slice(0, 2000) }, 'runner stderr');
  const parser = new DockerFrameParser(log, log);
  exec.on('data', (chunk: Buffer) => parser.push(chunk));
  exec.once('error', () => socket.destroy());
  exec.once('end', () => socket.destroy());
  exec.once('close', () => socket.destroy());
  socket.once('close', () => exec.destroy());
}
