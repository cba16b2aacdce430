import type { ContainerSummary } from '../docker/container-client';
import { rebuildSandbox } from './create-sandbox';
import type { LifecycleDeps } from './lifecycle-deps';
import { removeContainer } from './remove-sandbox';
import { findSandbox } from './sandbox-info';

/**
 * The sessions' containers of this node made from another image than the agent's (`stale`,
 * by session), recreated on the agent's image, each on its kept disk, under the session's
 * lock: the sandboxes of a node kept across an upgrade. A runner is then always the one of
 * the agent's image: a sandbox of an image made before the runner's front serves every
 * command run (ADR 47) is never served by a runner without it. What ran in it ends, as in a
 * deep sleep; its files stay. Returns the sessions recreated; one that fails is logged and
 * left for the next attempt (its container stays as it was, or is rebuilt by `reconcile`).
 */
export async function renewStale(
  deps: LifecycleDeps,
  stale: ReadonlyMap<string, ContainerSummary>,
): Promise<string[]> {
  const renewed: string[] = [];
  for (const [sessionId, container] of stale) {
    try {
      const done = await deps.locks.withLock(sessionId, async (lock) => {
        const info = await findSandbox(deps, sessionId);
        // Replaced (or removed) while this pass waited for the lock: nothing stale is left.
        if (info?.id !== container.id) return false;
        const spec = await deps.specs.read(sessionId);
        // A session being destroyed (its spec already gone) is not made again.
        if (spec === undefined) return false;
        if (!(await deps.workspaces.attach(sessionId))) {
          deps.logger.error({ sessionId }, 'a sandbox of an older image has lost its workspace');
          return false;
        }
        await removeContainer(deps, lock);
        await rebuildSandbox(deps, lock, spec);
        return true;
      });
      if (done) renewed.push(sessionId);
    } catch (err) {
      deps.logger.error({ err, sessionId }, 'could not recreate a sandbox on the current image');
    }
  }
  if (renewed.length > 0) {
    deps.logger.info({ renewed }, 'recreated sandboxes of an older image on the current one');
  }
  return renewed;
}

/**
 * The id of the image new sandboxes are made from; undefined when the agent cannot tell (the
 * image is missing: nothing is recreated then, and creates report it).
 */
export function currentImageId(deps: LifecycleDeps): Promise<string | undefined> {
  return deps.containers.inspectImage(deps.config.sandboxImage).catch((err: unknown) => {
    deps.logger.warn({ err }, 'the sandbox image cannot be inspected: no sandbox is recreated');
    return undefined;
  });
}
