import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** Applies an `iptables-restore --noflush` input in one transaction. */
export type Restore = (input: string) => Promise<void>;
/** Runs `iptables` with `args`, inside the network namespace of `netnsPid` when given. */
export type Iptables = (args: string[], netnsPid?: number) => Promise<unknown>;

export const iptablesRestore: Restore = (input) =>
  new Promise((resolve, reject) => {
    const child = spawn('iptables-restore', ['-w', '--noflush'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`iptables-restore: ${stderr.trim() || code}`)),
    );
    child.stdin.end(input);
  });

export const iptables: Iptables = (args, netnsPid) =>
  netnsPid === undefined
    ? exec('iptables', ['-w', ...args])
    : exec('nsenter', [`--net=/proc/${netnsPid}/ns/net`, 'iptables', '-w', ...args]);
