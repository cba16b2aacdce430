// Generates the TypeScript types of proto/ into packages/proto/src/generated: a build output,
// ignored by git, that `pnpm build` makes first (scripts/build.mjs). Only the files whose text
// changes are written and those proto/ no longer gives are removed, so that an unchanged proto/
// leaves `tsc -b` nothing to do. `--out DIR` writes elsewhere (scripts/gen.test.mjs).
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'packages/proto/package.json'));
const bin = join(
  dirname(require.resolve('@grpc/proto-loader/package.json')),
  'build/bin/proto-loader-gen-types.js',
);
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const target = values.out ?? join(root, 'packages/proto/src/generated');
const fresh = mkdtempSync(join(tmpdir(), 'gen-protos-'));

const walk = (dir) =>
  existsSync(dir)
    ? readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? walk(path) : [path];
      })
    : [];
const textsOf = (dir) =>
  new Map(walk(dir).map((file) => [relative(dir, file), readFileSync(file, 'utf8')]));

try {
  execFileSync(
    process.execPath,
    [
      bin,
      'agent/v1/agent.proto',
      '--longs=Number',
      '--enums=String',
      '--defaults',
      '--oneofs',
      '--grpcLib=@grpc/grpc-js',
      `--outDir=${fresh}`,
      `--includeDirs=${join(root, 'proto')}`,
    ],
    { stdio: 'inherit' },
  );
  const kept = textsOf(target);
  for (const [name, text] of textsOf(fresh)) {
    // Keep generated files independent of where the repository is checked out.
    const portable = text.replaceAll(`${root}/`, '');
    const before = kept.get(name);
    kept.delete(name);
    if (before === portable) continue;
    const path = join(target, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, portable);
  }
  for (const name of kept.keys()) rmSync(join(target, name));
} finally {
  rmSync(fresh, { recursive: true, force: true });
}
