// ensure_node (ensure-node.sh): the host's Node 24 as it is; any other, the pinned release,
// fetched with npm, checked against its sha512, unpacked whole or not at all. npm and the host's
// node are stand-ins here (no network): the stand-in npm packs a fake release.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const LIB = new URL('.', import.meta.url).pathname;
const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];

/** A scratch directory: a host `node` of `hostVersion`, an `npm` packing a fake release. */
function scratch(hostVersion) {
  const dir = mkdtempSync(join(tmpdir(), 'ensure-node-'));
  const bin = join(dir, 'host-bin');
  mkdirSync(bin);
  const script = (path, text) => {
    writeFileSync(path, `#!/bin/bash\n${text}\n`);
    chmodSync(path, 0o755);
  };
  // The host's node answers -v with its version and runs everything else as the real node.
  script(
    join(bin, 'node'),
    `[ "$1" = -v ] && { echo ${hostVersion}; exit 0; }\nexec '${process.execPath}' "$@"`,
  );
  // The release: a `bin/node` that says it is the pinned version.
  const release = join(dir, 'release');
  mkdirSync(join(release, 'package', 'bin'), { recursive: true });
  script(join(release, 'package', 'bin', 'node'), 'echo "v$PINNED"');
  const tgz = join(dir, `node-linux-${arch}-release.tgz`);
  spawnSync('tar', ['-czf', tgz, '-C', release, 'package']);
  // npm pack <name>@<version>: the release, under the name npm gives it, in the working dir.
  script(
    join(bin, 'npm'),
    `echo "$@" >> '${dir}/npm-calls'\nv=\${3#*@}\ncp '${tgz}' "node-linux-${arch}-$v.tgz"`,
  );
  const sha512 = `sha512-${createHash('sha512').update(readFileSync(tgz)).digest('base64')}`;
  return { dir, bin, cache: join(dir, 'cache'), sha512 };
}

/** Runs ensure_node in bash with `setup` before it; its PATH's node -v, and the output. */
function ensureNode({ bin, cache }, setup = '') {
  const run = spawnSync(
    'bash',
    [
      '-c',
      `set -e; source '${LIB}common.sh'; source '${LIB}ensure-node.sh'; export PINNED=$NODE_PIN; ${setup}
       echo "pin=$NODE_PIN"; ensure_node; echo "node=$(node -v)"`,
    ],
    {
      encoding: 'utf8',
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: '/nonexistent', SANDBOX_CACHE_DIR: cache },
    },
  );
  const out = run.stdout + run.stderr;
  return { status: run.status, out, pin: /pin=(\S+)/.exec(out)?.[1] };
}

test('a host whose node is already 24 uses its own: nothing is fetched', () => {
  const s = scratch('v24.0.1');
  const { status, out } = ensureNode(s);
  assert.equal(status, 0, out);
  assert.match(out, /node=v24\.0\.1/);
  assert.equal(existsSync(join(s.dir, 'npm-calls')), false);
});

test('another node: the pinned release, checked and unpacked under the cache, first on PATH', () => {
  const s = scratch('v20.20.2');
  const pin = `NODE_PIN_SHA512[${arch}]='${s.sha512}'`;
  const first = ensureNode(s, pin);
  assert.equal(first.status, 0, first.out);
  assert.match(first.out, new RegExp(`node=v${first.pin}\\n`));
  assert.deepEqual(readdirSync(s.cache), [`node-v${first.pin}-${arch}`]);
  // The second time it is there already: npm is not asked again.
  const second = ensureNode(s, pin);
  assert.equal(second.status, 0, second.out);
  assert.match(second.out, new RegExp(`node=v${first.pin}\\n`));
  assert.equal(readFileSync(join(s.dir, 'npm-calls'), 'utf8').trim().split('\n').length, 1);
});

test('a release that does not match its pinned sha512 is refused, and nothing is left behind', () => {
  const s = scratch('v20.20.2');
  const { status, out } = ensureNode(s);
  assert.notEqual(status, 0);
  assert.match(out, /does not match its pinned sha512/);
  assert.doesNotMatch(out, /node=/);
  assert.deepEqual(readdirSync(s.cache), []);
});
