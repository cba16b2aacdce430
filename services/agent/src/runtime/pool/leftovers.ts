import { isPoolSlot, sandboxLabelKeys, slotOfContainerName } from '../docker/docker-names';
import { thawLeftover } from './member-freezer';
import type { WarmPoolDeps } from './warm-pool-deps';

/**
 * Members of an earlier run of the agent (it stopped or crashed) are not trusted: their
 * containers and workspaces are removed. A claimed member has the session's name and is left
 * alone.
 */
export async function removeLeftovers(deps: WarmPoolDeps): Promise<void> {
  const { containers, workspaces, config, logger } = deps;
  const labels = sandboxLabelKeys(config.labelPrefix);
  const leftovers: string[] = [];
  for (const container of await containers.listByLabel(labels.node, config.nodeId)) {
    const slot = slotOfContainerName(container.name);
    if (slot === undefined || !isPoolSlot(slot)) continue;
    await thawLeftover(deps, container.id);
    await containers.remove(container.id);
    leftovers.push(slot);
  }
  for (const slot of await workspaces.slots()) {
    if (!isPoolSlot(slot)) continue;
    await workspaces.destroy(slot);
    if (!leftovers.includes(slot)) leftovers.push(slot);
  }
  if (leftovers.length > 0) logger.info({ slots: leftovers }, 'removed old pool members');
}
