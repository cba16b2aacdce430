// An AI agent's tool loop: the model writes code, the sandbox runs it with a timeout, and
// what it printed (or how it failed) goes back to the model as the tool's answer; files the
// code wrote are read back. The "model" here is a script of three turns, so the example runs
// without one: swap `nextCode` for your model's call.
//
//   SANDBOX_API_URL=… SANDBOX_API_KEY=… node examples/agent-tool-loop.mjs
import { ExecutionTimeoutError, Sandbox, SandboxError } from '@sandbox/sdk';

const TURNS = [
  // 1. works, and writes a file
  `import { writeFileSync } from 'node:fs';
   const primes: number[] = [];
   for (let n = 2; primes.length < 10; n++) if (primes.every((p) => n % p)) primes.push(n);
   writeFileSync('primes.json', JSON.stringify(primes));
   console.log('wrote', primes.length, 'primes');`,
  // 2. throws: the model sees the error and the line
  `const data = JSON.parse(require('node:fs').readFileSync('primes.json', 'utf8'));
   console.log(data.missing.length);`,
  // 3. never ends: the timeout stops it
  `while (true) {}`,
];

/** What the model needs of a failed run: the error's line (Node may head it with the source line). */
function errorLines(stderr) {
  const lines = stderr.trim().split('\n');
  const at = Math.max(
    0,
    lines.findIndex((line) => /^\w*Error\b/.test(line)),
  );
  return lines.slice(at, at + 2).join(' / ');
}

/** The model's next code given the last tool answer (here: the next scripted turn). */
function nextCode(turn, _lastAnswer) {
  return TURNS[turn];
}

const sandbox = await Sandbox.create({ metadata: { example: 'agent-tool-loop' } });
try {
  let answer = '';
  for (let turn = 0; turn < TURNS.length; turn += 1) {
    const code = nextCode(turn, answer);
    try {
      const result = await sandbox.run(code, { timeoutMs: 5_000 });
      answer =
        result.exitCode === 0
          ? `ok: ${result.stdout.trim()}`
          : `exit ${result.exitCode}: ${errorLines(result.stderr)}`;
      if (result.filesWritten?.length) answer += ` (files: ${result.filesWritten.join(', ')})`;
    } catch (err) {
      if (err instanceof ExecutionTimeoutError) answer = `timed out after 5 s`;
      else if (err instanceof SandboxError) answer = `tool error ${err.code}: ${err.message}`;
      else throw err;
    }
    console.log(`turn ${turn + 1}: ${answer}`);
  }
  const primes = JSON.parse(await sandbox.files.readText('primes.json'));
  console.log(`read back primes.json: ${primes.join(' ')}`);
} finally {
  await sandbox.delete();
}
