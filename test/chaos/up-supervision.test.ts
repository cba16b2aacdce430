import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * ./scripts/up runs each service under scripts/lib/supervise.sh: a service that exits is
 * restarted with back-off and logged, and the others keep running.
 */
const SUPERVISE = join(__dirname, '../../scripts/lib/supervise.sh');
const dir = mkdtempSync(join(tmpdir(), 'supervise-'));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('scripts/lib/supervise.sh', () => {
  it('restarts a crashing service with growing delays, keeps the others, and stops them all', async () => {
    const crasher = join(dir, 'crasher.log');
    const steady = join(dir, 'steady.log');
    const script = `
      set -e
      source ${SUPERVISE}
      export SUPERVISE_MAX_DELAY_S=2
      supervise crasher ${crasher} node -e "console.log('up', process.pid); setTimeout(() => process.exit(3), 50)" &
      supervise steady ${steady} node -e "console.log('up', process.pid); setInterval(() => {}, 1000)" &
      wait
    `;
    const up = spawn('bash', ['-c', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    up.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await sleep(4500);

    const crashes = readFileSync(crasher, 'utf8').match(
      /crasher exited with status 3; restarting in \d+s/g,
    );
    expect(crashes).toEqual([
      'crasher exited with status 3; restarting in 1s',
      'crasher exited with status 3; restarting in 2s',
      'crasher exited with status 3; restarting in 2s',
    ]);
    expect(stderr).toContain('crasher exited with status 3; restarting in 1s');
    const steadyPids = [...readFileSync(steady, 'utf8').matchAll(/up (\d+)/g)].map((m) =>
      Number(m[1]),
    );
    expect(steadyPids).toHaveLength(1); // never restarted, never stopped by the crashes
    const [steadyPid = 0] = steadyPids;
    expect(alive(steadyPid)).toBe(true);

    // Stopping the supervisors (what ./scripts/up does on Ctrl-C) stops their services.
    const supervisors = readFileSync(`/proc/${up.pid}/task/${up.pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    expect(supervisors).toHaveLength(2);
    for (const pid of supervisors) process.kill(pid, 'SIGTERM');
    await new Promise((resolve) => up.once('exit', resolve));
    expect(alive(steadyPid)).toBe(false);
    const crasherPids = [...readFileSync(crasher, 'utf8').matchAll(/up (\d+)/g)].map((m) =>
      Number(m[1]),
    );
    expect(crasherPids.filter(alive)).toEqual([]);
  });
});
