// `pnpm build`: makes the generated code, which git does not keep, then compiles every package.
// The SDK's types come from the built gateway's OpenAPI document, hence the order: proto/'s types
// (gen-protos) → the gateway and the packages it imports (tsc -b services/gateway) → the SDK's
// types (gen-sdk-types) → everything else (tsc -b) → the SDK's ES module build (dist/esm; tsc -b
// made its CommonJS one). Each generator leaves its files untouched when their sources have not
// changed, so that a warm build stays fast. `--no-esm` (pnpm typecheck) stops before the ES
// module build.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
const esm = !process.argv.includes('--no-esm');

const steps = [
  ['scripts/gen-protos.mjs'],
  [tsc, '-b', 'services/gateway'],
  ['scripts/gen-sdk-types.mjs'],
  [tsc, '-b'],
];
if (esm) steps.push([tsc, '-p', 'packages/sdk/tsconfig.esm.json']);

for (const args of steps) {
  const { status } = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
if (esm) {
  writeFileSync(join(root, 'packages/sdk/dist/esm/package.json'), '{"type":"module"}\n');
}
