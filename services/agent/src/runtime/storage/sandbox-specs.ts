import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxSpec } from '../sandbox-runtime';
import { isSessionId } from '@sandbox/contract';

/**
 * What each sandbox of this node was created with, beside its workspace, so that the agent can
 * rebuild a container that vanished (its workspace still holding the session's files). Removed
 * first when a session is destroyed, so a half-finished removal is never brought back.
 */
export class SandboxSpecs {
  constructor(private readonly dir: string) {}

  private path(sessionId: string): string {
    return join(this.dir, `${sessionId}.json`);
  }

  async write(spec: SandboxSpec): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = this.path(spec.sessionId);
    await writeFile(`${path}.tmp`, JSON.stringify(spec), { mode: 0o600 });
    await rename(`${path}.tmp`, path);
  }

  async read(sessionId: string): Promise<SandboxSpec | undefined> {
    if (!isSessionId(sessionId)) return undefined;
    const text = await readFile(this.path(sessionId), 'utf8').catch(() => undefined);
    return text === undefined ? undefined : (JSON.parse(text) as SandboxSpec);
  }

  async remove(sessionId: string): Promise<void> {
    await rm(this.path(sessionId), { force: true });
  }

  async list(): Promise<SandboxSpec[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const specs: SandboxSpec[] = [];
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const spec = await this.read(name.slice(0, -'.json'.length));
      if (spec !== undefined) specs.push(spec);
    }
    return specs;
  }
}
