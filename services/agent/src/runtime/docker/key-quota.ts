import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@sandbox/logger';

/**
 * What one sandbox takes of its root's kernel key quota, with room to spare: runc gives the
 * container, and each `docker exec` in it (the runner's), a session keyring of its own, about
 * 70 bytes each (measured: 2 keys, 140 bytes per session).
 */
export const KEYS_PER_SANDBOX = 4;
export const KEY_BYTES_PER_SANDBOX = 400;

/** Where the kernel's key quotas of unprivileged users are set (`kernel.keys.*`). */
export const KEY_SYSCTL_DIR = '/proc/sys/kernel/keys';

/** A quota the host must have for `sandboxes`, and what it has now. */
interface QuotaChange {
  name: 'maxkeys' | 'maxbytes';
  had: number;
  needed: number;
}

/**
 * Makes room in the kernel's key quota for `sandboxes` containers. Every keyring runc makes is
 * charged to the container root's host uid. Under `userns-remap` that is one unprivileged uid
 * for every sandbox, whose quota (by default 200 keys and 20,000 bytes) ends at about a
 * hundred containers: the next one fails to start ("unable to create session key: disk quota
 * exceeded"). Raises `kernel.keys.maxkeys` and `maxbytes` to what `sandboxes` need; never
 * lowers them. Where the agent may not write them (a container with a read-only /proc/sys),
 * it logs the sysctl to set and the number of sandboxes the host takes until then.
 */
export async function ensureKeyQuota(
  sandboxes: number,
  logger: Logger,
  dir: string = KEY_SYSCTL_DIR,
): Promise<void> {
  const wanted = {
    maxkeys: sandboxes * KEYS_PER_SANDBOX,
    maxbytes: sandboxes * KEY_BYTES_PER_SANDBOX,
  };
  const changes: QuotaChange[] = [];
  for (const name of ['maxkeys', 'maxbytes'] as const) {
    const had = Number((await readFile(join(dir, name), 'utf8')).trim());
    if (had < wanted[name]) changes.push({ name, had, needed: wanted[name] });
  }
  for (const change of changes) {
    try {
      await writeFile(join(dir, change.name), `${change.needed}\n`);
      logger.info(
        { sysctl: `kernel.keys.${change.name}`, from: change.had, to: change.needed, sandboxes },
        "raised the kernel key quota of the sandboxes' remapped root",
      );
    } catch (err) {
      const perSandbox = change.name === 'maxkeys' ? KEYS_PER_SANDBOX : KEY_BYTES_PER_SANDBOX;
      logger.warn(
        {
          err,
          sysctl: `kernel.keys.${change.name}=${change.needed}`,
          sandboxesAtLeast: Math.floor(change.had / perSandbox),
        },
        'could not raise the kernel key quota: past some number of sandboxes above this one, new ones fail to start; set the sysctl on the host',
      );
    }
  }
}
