// What a soak (bench/soak.mjs) must not leave behind, looked for on the host after the end.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docker } from './lib.mjs';

/** The filter table and the nat table, without counters. */
export function firewallRules() {
  return ['filter', 'nat']
    .map((table) => execFileSync('iptables-save', ['-t', table], { encoding: 'utf8' }))
    .join('')
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .map((line) => line.replace(/\[\d+:\d+\]/g, ''))
    .join('\n');
}

/** What the soak left on the host: containers, disks, loop devices, mounts, CPU groups, rules. */
export async function leftovers({ nodeId, dirs }, rulesBefore) {
  const found = {};
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`io.sandbox.node=${nodeId}`] },
  });
  found.containers = containers.map((c) => c.Names[0]);
  const files = (dir) => (existsSync(dir) ? readdirSync(dir, { recursive: true }) : []);
  found.diskImages = files(dirs.workspaces).filter((f) => String(f).endsWith('.ext4'));
  found.sessionSpecs = files(join(dirs.workspaces, '.specs'));
  found.savedWorkspaces = existsSync(dirs.blobs)
    ? readdirSync(dirs.blobs, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath ?? entry.path, entry.name))
    : [];
  found.loopDevices = execFileSync('losetup', ['-a'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(dirs.workspaces));
  found.mounts = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .filter((line) => line.split(' ')[1]?.startsWith(dirs.workspaces));
  found.cpuGroups = files(`/sys/fs/cgroup/cpu/sandbox/io.sandbox.${nodeId}`).filter(
    (f) => !String(f).includes('/') && !String(f).includes('.'),
  );
  const rulesAfter = firewallRules().split('\n');
  const before = new Set(rulesBefore.split('\n'));
  const after = new Set(rulesAfter);
  found.firewallRulesAdded = rulesAfter.filter((r) => !before.has(r));
  found.firewallRulesRemoved = [...before].filter((r) => !after.has(r));
  return found;
}
