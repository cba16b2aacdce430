import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAccount, type TestAccount } from '../support/api';
import { useStack } from '../support/use-stack';

/** The SDK's runnable examples (examples/*.mjs), run as a reader would run them. */
const t = useStack({ edge: true });
let account: TestAccount;
const run = promisify(execFile);

const scratch = mkdtempSync(join(tmpdir(), 'sandbox-examples-'));

beforeAll(async () => {
  account = await createAccount(t.stack, 'paid');
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const example = async (name: string, args: string[] = []) => {
  const script = join(__dirname, '../../examples', name);
  const { stdout } = await run(process.execPath, [script, ...args], {
    env: {
      PATH: process.env.PATH,
      SANDBOX_API_URL: `${t.stack.url}/v1`,
      SANDBOX_API_KEY: account.key,
      EDGE_URL: t.stack.edge?.url,
    },
  });
  return stdout;
};

it('agent-tool-loop: a run that works, one that throws, one stopped by its timeout', async () => {
  const out = await example('agent-tool-loop.mjs');
  expect(out).toContain('turn 1: ok: wrote 10 primes (files: primes.json)');
  expect(out).toMatch(/turn 2: exit 1: .*TypeError/);
  expect(out).toContain('turn 3: timed out after 5 s');
  expect(out).toContain('read back primes.json: 2 3 5 7 11 13 17 19 23 29');
});

it('dev-server-preview: the app answers through its private preview', async () => {
  const out = await example('dev-server-preview.mjs');
  expect(out).toContain('without the token: 403');
  expect(out).toContain('with the token: 200 hello from /greeting in the sandbox');
});

it('parallel-batch: every job answered in order, the failing one marked', async () => {
  const out = await example('parallel-batch.mjs');
  expect(out).toContain('0: 0\n');
  expect(out).toContain('23: 529\n');
  expect(out).toContain('7: failed (exit 1)');
  expect(out).toContain('23 ok, 1 failed, 3 at a time');
});

it('background-process: followed live, still running after the loop, then killed', async () => {
  const out = await example('background-process.mjs');
  expect(out).toMatch(/started: pid \d+, proc_[a-f0-9]{16}/);
  expect(out).toContain('after 3 ticks it is running');
  expect(out).toContain('killed: yes, now exited');
});

it('chart-svg: Vega and Vega-Lite installed on first use, the chart back as an SVG result', async () => {
  const out = await example('chart-svg.mjs', [join(scratch, 'chart.svg')]);
  expect(out).toMatch(/^vega \d+\.\d+\.\d+ imported$/m);
  expect(out).toContain('chart: { bars: 5, bytes: ');
  const svg = readFileSync(join(scratch, 'chart.svg'), 'utf8');
  expect(out).toContain(`wrote ${join(scratch, 'chart.svg')}: an SVG of ${svg.length} bytes`);
  expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  // Five bars, labelled with the data's languages, the tallest first (sort: '-y').
  expect(svg.match(/aria-roledescription="bar"/g)).toHaveLength(5);
  const labels = [...svg.matchAll(/>([A-Za-z]+)<\/text>/g)].map((m) => m[1]);
  expect(labels.slice(0, 5)).toEqual(['Go', 'Rust', 'JavaScript', 'Python', 'TypeScript']);
}, 240_000);
