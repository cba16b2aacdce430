import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import type { AppError } from '@sandbox/errors';
import { RUNNER_FRONT_PATH, RUNNER_USER, SANDBOX_USER } from '@sandbox/contract';
import type { Logger } from '@sandbox/logger';
import type { Runners, RunnerStats } from '../lifecycle/lifecycle-deps';
import { RunnerClient } from './runner-client';
import { linkRunner, type RunnerStream } from './runner-link';

/**
 * The runner's front (ADR 34), which starts the runner's Node. Every sandbox has it: one of an
 * image made before it is recreated on the current image when the agent starts (ADR 47).
 */
const RUNNER_COMMAND = [RUNNER_FRONT_PATH];

/** How runners reach the agent's socket in their sandbox's link directory (ADR 33). */
export interface RunnerLinks {
  /** The label that names a container's link directory (`RunnerLinkContainers`). */
  label: string;
  /** The host directory of a link, from its container's label; undefined if it names none. */
  linkDir(label: string): string | undefined;
  /** The host ids of a sandbox's root. */
  owner(): { uid: number; gid: number };
}

/** How a container's runner starts: as whom, and through which link directory, if any. */
interface LaunchPlan {
  user: string;
  linkDir: string | undefined;
}

/** One runner client per sandbox; each starts its runner with `docker exec` when first used. */
export class RunnerPool implements Runners {
  private readonly clients = new Map<string, { containerId: string; client: RunnerClient }>();
  /** How each container's runner starts, by container id. */
  private readonly plans = new Map<string, LaunchPlan>();
  /** Each container's stats as its runner last gave them. */
  private readonly lastStatsOf = new Map<string, RunnerStats>();

  constructor(
    private readonly docker: Docker,
    private readonly logger: Logger,
    private readonly links?: RunnerLinks,
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

  async warmUp(sessionId: string, containerId: string, { settled = false } = {}): Promise<void> {
    const ping = settled ? { op: 'ping' as const, settled } : { op: 'ping' as const };
    await this.get(sessionId, containerId).request(ping, 'pong');
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
    this.plans.delete(containerId);
    this.lastStatsOf.delete(containerId);
  }

  /**
   * How the container's runner starts. As root (RUNNER_USER) in a container made for it, as the
   * sandbox user in one made before runners ran as root (it has no capability to drop to it);
   * linked to the agent's socket when the container has a link directory.
   */
  private async planOf(containerId: string): Promise<LaunchPlan> {
    const known = this.plans.get(containerId);
    if (known !== undefined) return known;
    const info = await this.docker.getContainer(containerId).inspect();
    const link = this.links === undefined ? undefined : info.Config.Labels?.[this.links.label];
    const plan = {
      user: info.Config.User === RUNNER_USER ? RUNNER_USER : SANDBOX_USER,
      linkDir: link === undefined ? undefined : this.links?.linkDir(link),
    };
    this.plans.set(containerId, plan);
    return plan;
  }

  private async launch(containerId: string): Promise<RunnerStream> {
    const { user, linkDir } = await this.planOf(containerId);
    const start = async (env: string[]): Promise<Duplex> => {
      const exec = await this.docker.getContainer(containerId).exec({
        Cmd: RUNNER_COMMAND,
        User: user,
        WorkingDir: '/workspace',
        Env: env,
        AttachStdin: true,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
      });
      return exec.start({ hijack: true, stdin: true });
    };
    if (linkDir === undefined || this.links === undefined) {
      return { stream: await start([]), framed: true };
    }
    return linkRunner({
      dir: linkDir,
      owner: this.links.owner(),
      start,
      logger: this.logger.child({ containerId }),
    });
  }
}
