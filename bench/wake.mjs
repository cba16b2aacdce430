// The wake rows of pnpm bench: the first request after idle (unpause), and after deep sleep
// for the workspaces of issue 17: 30 and 100 MB of random bytes (nothing compresses), 100 MB
// of copies of the image's node_modules (7,900 small files that compress well), 5,000 small
// random files, and 500 MB of both. Each
// deep-sleep row comes with the save (its archive's size) and with a baseline measured in the
// same run: a bare `tar -x` of the same files, uncompressed and from the page cache, into a
// new ext4 disk like a pool member's; the old format's `tar -xz` of them is measured the
// same way.
import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { elapsedMs, row, sleep, startBenchStack } from './lib.mjs';

const run = promisify(execFile);
/** How the agent makes and mounts a workspace disk: the baselines' disks are made the same way. */
const { WORKSPACE_MOUNT_OPTIONS, workspaceMkfsArgs } = createRequire(import.meta.url)(
  '../services/agent/dist/index.js',
);
const MB = 1_000_000;

/** Copies of the image's npm and tsx (JavaScript, JSON, docs) until the workspace holds `mb`. */
const copyNodeModulesUntil = (mb) =>
  `i=0; while [ "$(du -s --apparent-size -B1000000 . | cut -f1)" -lt ${mb} ]; do ` +
  'mkdir -p node_modules/$i && cp -r /usr/lib/node_modules/npm /usr/local/lib/node_modules/tsx node_modules/$i/; ' +
  'i=$((i + 1)); done';

/** Shell commands run in the session that make each workspace (issue 17's kinds). */
export const WORKSPACES = [
  // Issue 39's row: 30 MB that does not compress, and 200 small files beside it.
  {
    label: '30 MB random plus 200 files',
    fill: 'head -c 30000000 /dev/urandom > data.bin && mkdir few && for i in $(seq 200); do echo $i > few/f$i; done',
  },
  { label: '100 MB random', fill: 'head -c 100000000 /dev/urandom > data.bin' },
  // The image's npm and tsx, copied until 100 MB: about 7,900 small files that compress well.
  { label: '100 MB node_modules', fill: copyNodeModulesUntil(100) },
  {
    label: '5,000 small files',
    fill:
      "node -e \"const fs = require('fs'), { randomBytes } = require('crypto'); fs.mkdirSync('small'); " +
      "for (let i = 0; i < 5000; i += 1) fs.writeFileSync('small/f' + i, randomBytes(1 + ((i * 997) % 4096)))\"",
  },
  {
    label: '500 MB mixed (250 MB random, node_modules)',
    fill: `head -c 250000000 /dev/urandom > data.bin && ${copyNodeModulesUntil(500)}`,
  },
];

/** The session's archive in the local blob store and its size in bytes. */
async function archiveBytes(stack, sessionId) {
  const dir = stack.agentConfig.blobStoreDir;
  const [name] = (await readdir(dir)).filter(
    (n) => n.startsWith(`${sessionId}.`) && !n.endsWith('.json'),
  );
  return name === undefined ? 0 : (await stat(join(dir, name))).size;
}

/** A new 1 GB ext4 disk, loop-mounted at `mount`, as the agent makes a pool member's. */
async function newDisk(image, mount) {
  await run('truncate', ['-s', '1024M', image]);
  await run('mkfs.ext4', workspaceMkfsArgs(image));
  await mkdir(mount, { recursive: true });
  await run('mount', ['-o', WORKSPACE_MOUNT_OPTIONS, image, mount]);
}

async function dropDisk(image, mount) {
  await run('umount', [mount]).catch(() => undefined);
  await rm(mount, { recursive: true, force: true });
  await rm(image, { force: true });
}

/**
 * `tar -x` (with `flags`) of the files under `source`, archived once beforehand, into a new
 * disk each round (its making is not timed).
 */
async function bareUnpack(name, source, scratch, rounds, flags) {
  const archive = join(scratch, `baseline.tar${flags}`);
  await run('tar', ['--one-file-system', `-c${flags}f`, archive, '-C', source, '.']);
  const times = [];
  try {
    for (let i = 0; i < rounds; i += 1) {
      const image = join(scratch, 'disk.ext4');
      const mount = join(scratch, 'disk');
      await newDisk(image, mount);
      try {
        const started = process.hrtime.bigint();
        await run('tar', [`-x${flags}f`, archive, '-C', mount]);
        times.push(elapsedMs(started));
      } finally {
        await dropDisk(image, mount);
      }
    }
  } finally {
    await rm(archive, { force: true });
  }
  return row(name, rounds, times);
}

/**
 * Sweeps `sessionId` into `expectField` after `waitMs`, then times its next request, `rounds`
 * times. Only the measured session may be due meanwhile.
 */
async function timeWakes(stack, { poolSize, rounds }, sessionId, name, waitMs, expectField) {
  const times = [];
  const sweeps = [];
  for (let i = 0; i < rounds; i += 1) {
    // The pool refills, then a request starts the delay: counted from before a long wait
    // for the pool, it could make the session due for the next transition too (deep sleep,
    // where the row waits for idle).
    await stack.poolReady(poolSize);
    await stack.api('/execute', { sessionId, command: 'true' });
    await sleep(waitMs);
    const swept = process.hrtime.bigint();
    const pass = await stack.gateway.sweeper.sweep();
    sweeps.push(elapsedMs(swept));
    if (!pass[expectField].includes(sessionId))
      throw new Error(`${name}: session did not go to ${expectField}: ${JSON.stringify(pass)}`);
    const started = process.hrtime.bigint();
    await stack.api('/execute', { sessionId, command: 'true' });
    times.push(elapsedMs(started));
  }
  return { wakes: row(name, rounds, times), sweeps };
}

/** A session filled by `fill` (a shell command); returns its id. */
export async function filledSession(stack, label, fill) {
  const sessionId = JSON.parse(await stack.api('/sessions/create', {})).sessionId;
  const filled = JSON.parse(
    await stack.api('/execute', { sessionId, command: fill, timeout: 300 }),
  );
  if (filled.exitCode !== 0) throw new Error(`filling ${label}: ${filled.stderr}`);
  return sessionId;
}

/** Workspaces of the kept-disk rows: up to nearly the whole 1 GB disk. */
// ./scripts/up archives a workspace under SANDBOX_DEEP_SLEEP_DISK_MIN_MB (128) all the same: a
// 30 MB one's wake is the archive row's.
const KEPT_DISK_WORKSPACES = [
  WORKSPACES[1],
  WORKSPACES[4],
  { label: '900 MB random', fill: 'head -c 900000000 /dev/urandom > data.bin' },
];

/**
 * The wake rows of SANDBOX_DEEP_SLEEP=disk (what ./scripts/up runs): the session's disk stays,
 * a wake is a new container on it. Each row's baseline is the archive wake of the same
 * workspace in `archived` (this run's rows), where there is one.
 */
export async function keptDiskWakeRows(stack, results, { poolSize, rounds, archived }) {
  for (const { label, fill } of KEPT_DISK_WORKSPACES) {
    const sessionId = await filledSession(stack, label, fill);
    try {
      const { wakes, sweeps } = await timeWakes(
        stack,
        { poolSize, rounds },
        sessionId,
        `wake from deep sleep keeping the disk, ${label} workspace`,
        2100,
        'slept',
      );
      const baseline = archived.find((r) => r.name === `wake from deep sleep, ${label} workspace`);
      results.push(
        { ...wakes, ...(baseline === undefined ? {} : { baseline }) },
        row(`deep sleep keeping the disk (save), ${label} workspace`, rounds, sweeps),
      );
    } finally {
      await stack.deleteSession(sessionId);
    }
  }
}

/** Pushes the wake rows onto `results`. Only the measured session may be due meanwhile. */
export async function wakeRows(stack, results, { poolSize, rounds }) {
  const wake = (sessionId, name, waitMs, expectField) =>
    timeWakes(stack, { poolSize, rounds }, sessionId, name, waitMs, expectField);

  const scratch = join(stack.agentConfig.workspaceDir, '..', `${stack.nodeId}-baseline`);
  await mkdir(scratch, { recursive: true });
  try {
    for (const [index, { label, fill }] of WORKSPACES.entries()) {
      const sessionId = await filledSession(stack, label, fill);
      try {
        if (index === 0) {
          results.push(
            (await wake(sessionId, 'wake from idle (first request)', 1100, 'idled')).wakes,
          );
        }
        const mount = join(stack.agentConfig.workspaceDir, sessionId);
        const bare = await bareUnpack(
          `baseline: tar -x of the same files into a new disk, ${label}`,
          mount,
          scratch,
          rounds,
          '',
        );
        const gzip = await bareUnpack(
          `reference: tar -xz of them (the old format), ${label}`,
          mount,
          scratch,
          rounds,
          'z',
        );
        const { wakes, sweeps } = await wake(
          sessionId,
          `wake from deep sleep, ${label} workspace`,
          2100,
          'slept',
        );
        // A wake removes the archive: one more save, to weigh it.
        await sleep(2100);
        await stack.gateway.sweeper.sweep();
        const bytes = await archiveBytes(stack, sessionId);
        results.push(
          bare,
          gzip,
          { ...wakes, baseline: bare },
          {
            ...row(`deep sleep (save), ${label} workspace`, rounds, sweeps),
            note: `archive ${(bytes / MB).toFixed(1)} MB`,
            archiveBytes: bytes,
          },
        );
      } finally {
        await stack.deleteSession(sessionId);
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The wake rows of pnpm bench, each group on a stack of its own where sessions are due within
 * seconds: deep sleep to an archive, then keeping the disk (./scripts/up's setting).
 */
export async function wakeStackRows(results, rounds) {
  // A stack of its own, where sessions are due within seconds: only the measured one is.
  const driven = await startBenchStack({
    name: 'bench-wake',
    agentProcess: true,
    drivenLifecycle: true,
  });
  try {
    await wakeRows(driven, results, { poolSize: driven.poolSize, rounds: rounds });
  } finally {
    await driven.stop();
  }
  // Deep sleep keeping the disk (./scripts/up's setting), against the archive rows above.
  const keeping = await startBenchStack({
    name: 'bench-wake-disk',
    agentProcess: true,
    drivenLifecycle: true,
    agentEnv: { SANDBOX_DEEP_SLEEP: 'disk', SANDBOX_DEEP_SLEEP_DISK_MIN_MB: '0' },
  });
  try {
    await keptDiskWakeRows(keeping, results, {
      poolSize: keeping.poolSize,
      rounds: rounds,
      archived: [...results],
    });
  } finally {
    await keeping.stop();
  }
}
