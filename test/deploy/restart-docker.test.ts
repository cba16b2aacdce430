import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * scripts/lib/ensure-docker.sh under systemd, against a systemctl and a docker client that
 * stand in for them (never the machine's own dockerd): a docker that failed to start too
 * often has hit systemd's start limit, which refuses every start until `reset-failed`.
 */
const ROOT = join(__dirname, '..', '..');

const FAKE_SYSTEMCTL = `#!/bin/bash
echo "$*" >> "$STATE/calls"
case $1 in
  is-active) exit 0 ;;
  reset-failed) rm -f "$STATE/start-limit-hit"; exit 0 ;;
  start|restart)
    if [[ -e $STATE/start-limit-hit ]]; then exit 1; fi
    touch "$STATE/up"; exit 0 ;;
esac
exit 1
`;

const FAKE_DOCKER = `#!/bin/bash
case $1 in
  info) [[ -e $STATE/up ]] ;;
  network) [[ -e $STATE/bridge ]] && cat "$STATE/bridge" ;;
  *) exit 1 ;;
esac
`;

describe('restart_docker under systemd', () => {
  let state: string;

  beforeEach(() => {
    state = mkdtempSync(join(tmpdir(), 'restart-docker-'));
    mkdirSync(join(state, 'bin'));
    mkdirSync(join(state, 'systemd'));
    for (const [name, text] of [
      ['systemctl', FAKE_SYSTEMCTL],
      ['docker', FAKE_DOCKER],
    ] as const) {
      writeFileSync(join(state, 'bin', name), text);
      chmodSync(join(state, 'bin', name), 0o755);
    }
  });

  afterEach(() => rmSync(state, { recursive: true, force: true }));

  function restartDocker(command = 'restart_docker'): { status: number | null; calls: string[] } {
    const result = spawnSync(
      'bash',
      ['-c', `source scripts/lib/common.sh && source scripts/lib/ensure-docker.sh && ${command}`],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          PATH: `${join(state, 'bin')}:${process.env.PATH ?? ''}`,
          STATE: state,
          DOCKER: join(state, 'bin', 'docker'),
          SYSTEMD_RUN_DIR: join(state, 'systemd'),
          ENSURE_DOCKER_TIMEOUT: '2',
        },
        encoding: 'utf8',
      },
    );
    const calls = readFileSync(join(state, 'calls'), 'utf8').trim().split('\n');
    return { status: result.status, calls };
  }

  it('starts docker again after its start limit was hit (a rolled-back setting)', () => {
    writeFileSync(join(state, 'start-limit-hit'), '');
    const { status, calls } = restartDocker();
    expect(status).toBe(0);
    expect(calls).toEqual(['is-active --quiet docker', 'reset-failed docker', 'restart docker']);
  });

  it('restarts, once, an engine whose default bridge lost its interface (no container starts on it)', () => {
    writeFileSync(join(state, 'up'), '');
    writeFileSync(join(state, 'bridge'), 'sbxnobridge0\n');
    const { status, calls } = restartDocker('ensure_docker');
    expect(status).toBe(0);
    expect(calls.filter((call) => call === 'restart docker')).toHaveLength(1);
  });

  it('leaves an engine whose default bridge is there alone', () => {
    writeFileSync(join(state, 'up'), '');
    writeFileSync(join(state, 'bridge'), 'lo\n');
    writeFileSync(join(state, 'calls'), '');
    const { status, calls } = restartDocker('ensure_docker');
    expect(status).toBe(0);
    expect(calls).not.toContain('restart docker');
  });

  it('restarts a healthy docker through systemd too', () => {
    const { status, calls } = restartDocker();
    expect(status).toBe(0);
    expect(calls).toContain('restart docker');
  });
});

describe('dockerd_pid', () => {
  let dir: string;
  const sleepers: ChildProcess[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'dockerd-pid-'));
    // A process whose name is dockerd: a copy of sleep under that name.
    copyFileSync('/bin/sleep', join(dir, 'dockerd'));
    chmodSync(join(dir, 'dockerd'), 0o755);
  });

  afterEach(() => {
    for (const sleeper of sleepers.splice(0)) sleeper.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  function fakeDockerd(): number {
    const sleeper = spawn(join(dir, 'dockerd'), ['60'], { stdio: 'ignore' });
    sleepers.push(sleeper);
    return sleeper.pid ?? 0;
  }

  function dockerdPid(pidFile: string): string {
    const result = spawnSync(
      'bash',
      ['-c', 'source scripts/lib/common.sh && source scripts/lib/ensure-docker.sh && dockerd_pid'],
      { cwd: ROOT, env: { ...process.env, DOCKERD_PIDFILE: pidFile }, encoding: 'utf8' },
    );
    return result.stdout.trim();
  }

  it('names the engine of the pid file, not another process called dockerd', () => {
    fakeDockerd(); // a second engine (research), started before
    const engine = fakeDockerd();
    writeFileSync(join(dir, 'docker.pid'), `${engine}\n`);
    expect(dockerdPid(join(dir, 'docker.pid'))).toBe(String(engine));
  });

  it('falls back to a process called dockerd when the pid file names none', () => {
    const engine = fakeDockerd();
    writeFileSync(join(dir, 'docker.pid'), `${process.pid}\n`); // a stale file: not a dockerd
    const found = dockerdPid(join(dir, 'docker.pid'));
    expect(readFileSync(`/proc/${found}/comm`, 'utf8').trim()).toBe('dockerd');
    expect(found).not.toBe(String(process.pid));
    expect(engine).toBeGreaterThan(0);
  });
});
