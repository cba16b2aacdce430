// The size scan's own checks (node --test scripts/size-scan.d/): files and functions of each
// language over the limits are found, those at the limit and generated code are not. One scan
// of a scratch repository serves every case (each scan starts Node, TypeScript and Go).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

const scan = join(dirname(fileURLToPath(import.meta.url)), '..', 'size-scan');
const repo = mkdtempSync(join(tmpdir(), 'size-scan-'));
after(() => rmSync(repo, { recursive: true, force: true }));

/** `count` numbered statement lines. */
const body = (count, line = (i) => `  x += ${i};`) =>
  Array.from({ length: count }, (_, i) => line(i)).join('\n');

function write(path, text) {
  mkdirSync(dirname(join(repo, path)), { recursive: true });
  writeFileSync(join(repo, path), `${text}\n`);
}

function run(...paths) {
  const out = spawnSync(scan, ['--root', repo, '--json', ...paths], { encoding: 'utf8' });
  const findings = out.status === 2 ? [] : JSON.parse(out.stdout).findings;
  return { status: out.status, findings, stderr: out.stderr };
}

const names = (findings, dir) =>
  findings
    .filter((f) => f.path.startsWith(`${dir}/`))
    .map((f) => `${f.kind} ${f.path} ${f.name} ${f.lines}`)
    .sort();

let scanned;
before(() => {
  execFileSync('git', ['init', '-q', repo]);
  // TypeScript: 1 + 79 + 1 = 81 lines, and 1 + 78 + 1 = 80.
  write('ts/long.ts', `export function long(x: number) {\n${body(79)}\n}`);
  write('ts/fits.ts', `export const fits = (x: number) => {\n${body(78)}\n};`);
  write(
    'ts/big.ts',
    body(401, (i) => `export const v${i} = ${i};`),
  );
  write('t/a.test.ts', `describe('a', () => {\n${body(80, (i) => `  it('${i}', () => {});`)}\n});`);
  const goLines = (n) => body(n, (i) => `\tx += ${i}`);
  write(
    'go/m.go',
    `package m\n\ntype T struct{}\n\nfunc (t *T) Long(x int) int {\n${goLines(79)}\n}\n\n` +
      `var f = func(x int) int {\n\ts := "}{"\n${goLines(78)}\n}\n\nfunc short() {}`,
  );
  write(
    'c/s.c',
    `static int table[] = {\n${body(90, (i) => `  ${i},`)}\n};\n\n` +
      `int long_one(int x) {\n  /* } */ const char *s = "{";\n${body(78)}\n}\n\nint short_one(void) { return 0; }`,
  );
  write(
    'packages/proto/src/generated/g.ts',
    body(500, (i) => `export const v${i} = ${i};`),
  );
  write(
    'x/dist/d.js',
    body(500, (i) => `var v${i} = ${i};`),
  );
  write(
    'y/migrations/m.ts',
    body(500, (i) => `export const v${i} = ${i};`),
  );
  write('z/ok.ts', 'export const ok = 1;');
  scanned = run();
});

test('something over: exit status 1', () => {
  assert.equal(scanned.status, 1);
});

test('TypeScript: a function of 81 lines and a file of 401, not a function of 80', () => {
  assert.deepEqual(names(scanned.findings, 'ts'), [
    'file ts/big.ts  401',
    'function ts/long.ts long 81',
  ]);
});

test('tests: a describe callback counts, listed as test code', () => {
  const found = scanned.findings.filter((f) => f.path.startsWith('t/'));
  assert.deepEqual(
    found.map((f) => [f.name, f.lines, f.test]),
    [['callback of describe("a")', 82, true]],
  );
});

test('Go: methods and function literals, by go/ast', () => {
  assert.deepEqual(names(scanned.findings, 'go'), [
    'function go/m.go T.Long 81',
    'function go/m.go f 81',
  ]);
});

test('C: functions by their braces, not initializers, strings or comments', () => {
  assert.deepEqual(names(scanned.findings, 'c'), ['function c/s.c long_one 81']);
});

test('generated code, dist and migrations are skipped; nothing over exits 0', () => {
  for (const dir of ['packages', 'x', 'y', 'z']) assert.deepEqual(names(scanned.findings, dir), []);
  const { status, findings } = run('packages', 'x', 'y', 'z');
  assert.deepEqual([status, findings], [0, []]);
});
