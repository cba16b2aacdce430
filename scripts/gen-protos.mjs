// Generates the TypeScript types of proto/ into packages/proto/src/generated (committed).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'packages/proto/package.json'));
const bin = join(
  dirname(require.resolve('@grpc/proto-loader/package.json')),
  'build/bin/proto-loader-gen-types.js',
);
const out = join(root, 'packages/proto/src/generated');

rmSync(out, { recursive: true, force: true });
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
    `--outDir=${out}`,
    `--includeDirs=${join(root, 'proto')}`,
  ],
  { stdio: 'inherit' },
);

// Keep generated files independent of where the repository is checked out.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
for (const file of walk(out)) {
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll(`${root}/`, ''));
}
