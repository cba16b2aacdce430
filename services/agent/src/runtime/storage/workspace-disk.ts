/** How a workspace disk is mounted: on a loop device, with no set-uid or device files. */
export const WORKSPACE_MOUNT_OPTIONS = 'loop,nosuid,nodev,noatime';

/**
 * The arguments of `mkfs.ext4` for a workspace disk in `file`: no blocks kept for root, the
 * inode tables and journal set up lazily (made in a moment, even under load), and its root
 * directory owned by `owner` where one is given.
 */
export function workspaceMkfsArgs(file: string, owner?: { uid: number; gid: number }): string[] {
  const extended = ['lazy_itable_init=1', 'lazy_journal_init=1'];
  if (owner !== undefined) extended.unshift(`root_owner=${owner.uid}:${owner.gid}`);
  return ['-q', '-F', '-m', '0', '-E', extended.join(','), file];
}
