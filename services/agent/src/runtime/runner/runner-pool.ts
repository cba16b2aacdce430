import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { AppError } from '@sandbox/errors';
import { RUNNER_USER, SANDBOX_USER } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import type { Runners, RunnerStats } from '../lifecycle/lifecycle-deps';
import { RunnerClient } from './runner-client';

const RUNNER_COMMAND = ['node', '/opt/sandbox/runner/main.js'];

/** One runner client per sandbox; each starts its runner with `docker exec` when first used. */
export class RunnerPool implements Runners {
  private readonly clients = new Map<string, { containerId: string; client: RunnerClient }>();
  /** The user each container's runner starts as, by container id. */
  private readonly runnerUsers = new Map<string, string>();
  /** Each container's stats as its runner last gave them. */
  private readonly lastStatsOf = new Map<string, RunnerStats>();

  constructor(
    private readonly docker: Docker,
    private readonly logger: Logger,
  ) {}

  /** The session's runner client; a new one when its container was replaced. */
  get(sessionId: string, containerId: string): RunnerClient {
    const entry = this.clients.get(sessionId);
    if (entry !== undefined && entry.containerId === containerId) return entry.client;
    entry?.client.close();
    if (entry !== undefined) this.forget(entry.containerId);
    const client = new RunnerClient(
      () => this.launch(containerId),
      this.logger.child({ sessionId, containerId }),
    );
    this.clients.set(sessionId, { containerId, client });
    return client;
  }

  async warmUp(sessionId: string, containerId: string): Promise<void> {
    await this.get(sessionId, containerId).request({ op: 'ping' }, 'pong');
  }

  async stats(sessionId: string, containerId: string): Promise<RunnerStats> {
    const stats = await this.get(sessionId, containerId).request({ op: 'stats' }, 'stats');
    const result: RunnerStats = {
      filesCount: stats.filesCount,
      activeProcesses: stats.activeProcesses,
    };
    this.lastStatsOf.set(containerId, result);
    return result;
  }

  lastStats(containerId: string): RunnerStats | undefined {
    return this.lastStatsOf.get(containerId);
  }

  adopt(from: string, to: string): void {
    const entry = this.clients.get(from);
    if (entry === undefined) return;
    this.clients.delete(from);
    this.clients.get(to)?.client.close();
    this.clients.set(to, entry);
  }

  /** Ends the session's runner connection: its runs under way fail with `reason`. */
  close(sessionId: string, reason?: AppError): void {
    const entry = this.clients.get(sessionId);
    entry?.client.close(reason);
    if (entry !== undefined) this.forget(entry.containerId);
    this.clients.delete(sessionId);
  }

  private forget(containerId: string): void {
    this.runnerUsers.delete(containerId);
    this.lastStatsOf.delete(containerId);
  }

  /**
   * Who the container's runner starts as: root (RUNNER_USER) in a container made for it, the
   * sandbox user in one made before runners ran as root (it has no capability to drop to it).
   */
  private async runnerUser(containerId: string): Promise<string> {
    const known = this.runnerUsers.get(containerId);
    if (known !== undefined) return known;
    const info = await this.docker.getContainer(containerId).inspect();
    const user = info.Config.User === RUNNER_USER ? RUNNER_USER : SANDBOX_USER;
    this.runnerUsers.set(containerId, user);
    return user;
  }

  private async launch(containerId: string): Promise<Duplex> {
    const exec = await this.docker.getContainer(containerId).exec({
      Cmd: RUNNER_COMMAND,
      User: await this.runnerUser(containerId),
      WorkingDir: '/workspace',
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    return exec.start({ hijack: true, stdin: true });
  }
}
