// Generates the TypeScript types of proto/ into packages/proto/src/generated (committed).
// `--check`: generates into a temporary folder instead and fails when the committed files
// differ (./scripts/test runs it, so proto/ and the generated code never drift apart).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'packages/proto/package.json'));
const bin = join(
  dirname(require.resolve('@grpc/proto-loader/package.json')),
  'build/bin/proto-loader-gen-types.js',
);
const committed = join(root, 'packages/proto/src/generated');
const check = process.argv.includes('--check');
const out = check ? mkdtempSync(join(tmpdir(), 'gen-protos-')) : committed;

const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
const filesOf = (dir) => new Map(walk(dir).map((file) => [relative(dir, file), file]));

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
for (const file of walk(out)) {
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll(`${root}/`, ''));
}

if (check) {
  const fresh = filesOf(out);
  const kept = filesOf(committed);
  const differing = [...new Set([...fresh.keys(), ...kept.keys()])].filter((name) => {
    const a = fresh.get(name);
    const b = kept.get(name);
    return (
      a === undefined || b === undefined || readFileSync(a, 'utf8') !== readFileSync(b, 'utf8')
    );
  });
  rmSync(out, { recursive: true, force: true });
  if (differing.length > 0) {
    console.error(
      `packages/proto/src/generated does not match proto/ (run pnpm gen:protos): ${differing.sort().join(', ')}`,
    );
    process.exit(1);
  }
}
