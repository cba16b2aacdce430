import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { AppError } from '@sandbox/errors';
import { SANDBOX_USER } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import type { Runners } from '../lifecycle/lifecycle-deps';
import { RunnerClient } from './runner-client';

const RUNNER_COMMAND = ['node', '/opt/sandbox/runner/main.js'];

/** One runner client per sandbox; each starts its runner with `docker exec` when first used. */
export class RunnerPool implements Runners {
  private readonly clients = new Map<string, { containerId: string; client: RunnerClient }>();

  constructor(
    private readonly docker: Docker,
    private readonly logger: Logger,
  ) {}

  /** The session's runner client; a new one when its container was replaced. */
  get(sessionId: string, containerId: string): RunnerClient {
    const entry = this.clients.get(sessionId);
    if (entry !== undefined && entry.containerId === containerId) return entry.client;
    entry?.client.close();
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

  async stats(
    sessionId: string,
    containerId: string,
  ): Promise<{ filesCount: number; activeProcesses: number }> {
    const stats = await this.get(sessionId, containerId).request({ op: 'stats' }, 'stats');
    return { filesCount: stats.filesCount, activeProcesses: stats.activeProcesses };
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
    this.clients.get(sessionId)?.client.close(reason);
    this.clients.delete(sessionId);
  }

  private async launch(containerId: string): Promise<Duplex> {
    const exec = await this.docker.getContainer(containerId).exec({
      Cmd: RUNNER_COMMAND,
      User: SANDBOX_USER,
      WorkingDir: '/workspace',
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    return exec.start({ hijack: true, stdin: true });
  }
}
