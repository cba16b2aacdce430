import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@sandbox/logger';
import { INOTIFY_INSTANCES_PER_SANDBOX, INOTIFY_WATCHES_PER_SANDBOX } from './sandbox-user-limits';

/**
 * What one sandbox takes of its root's kernel key quota, with room to spare: runc gives the
 * container, and each `docker exec` in it (the runner's), a session keyring of its own, about
 * 70 bytes each (measured: 2 keys, 140 bytes per session).
 */
export const KEYS_PER_SANDBOX = 4;
export const KEY_BYTES_PER_SANDBOX = 400;

/** The host's per-user quotas (under /proc/sys) and what one sandbox needs of each. */
export const PER_SANDBOX: Readonly<Record<string, number>> = {
  'kernel/keys/maxkeys': KEYS_PER_SANDBOX,
  'kernel/keys/maxbytes': KEY_BYTES_PER_SANDBOX,
  'fs/inotify/max_user_instances': INOTIFY_INSTANCES_PER_SANDBOX,
  'fs/inotify/max_user_watches': INOTIFY_WATCHES_PER_SANDBOX,
};

/** The sysctl name of a path under /proc/sys. */
const sysctlName = (path: string) => path.replaceAll('/', '.');

/**
 * Makes room in the host's per-user kernel quotas for `sandboxes` containers. Under
 * `userns-remap` every sandbox's root is one unprivileged host uid and its user another, and
 * the kernel's defaults for a user end early:
 * - keys: every keyring runc makes is charged to the container's root; at the default 20,000
 *   bytes, about a hundred containers start, then none ("unable to create session key: disk
 *   quota exceeded");
 * - inotify: 128 instances for all sandboxes' users together. Each sandbox's own share is
 *   held by its user namespace (`SandboxUserLimits`); the host's limit must fit them all.
 *
 * Raises each to what `sandboxes` need; never lowers one. Where the agent may not write them
 * (a container with a read-only /proc/sys), it logs the sysctl to set on the host.
 */
export async function ensureHostQuotas(
  sandboxes: number,
  logger: Logger,
  root = '/proc/sys',
): Promise<void> {
  for (const [path, perSandbox] of Object.entries(PER_SANDBOX)) {
    const file = join(root, path);
    const needed = sandboxes * perSandbox;
    const had = Number((await readFile(file, 'utf8')).trim());
    if (had >= needed) continue;
    try {
      await writeFile(file, `${needed}\n`);
      logger.info(
        { sysctl: sysctlName(path), from: had, to: needed, sandboxes },
        'raised a per-user kernel quota for the sandboxes',
      );
    } catch (err) {
      logger.warn(
        {
          err,
          sysctl: `${sysctlName(path)}=${needed}`,
          sandboxesAtLeast: Math.floor(had / perSandbox),
        },
        'could not raise a per-user kernel quota: past some number of sandboxes above this one, new ones fail or starve; set the sysctl on the host',
      );
    }
  }
}
