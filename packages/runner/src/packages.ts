import { spawn } from 'node:child_process';
import { asSandboxUser } from './identity';
import { RunnerError } from './protocol';

/**
 * Unpacks a bundle of installed packages (a gzipped tar of `node_modules/…`, made by the
 * agent's installer) into `cwd`, as the sandbox user.
 */
export function extractBundle(cwd: string, bundle: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const [file = 'tar', ...args] = asSandboxUser([
      'tar',
      '-xzf',
      '-',
      '-C',
      cwd,
      '--no-same-owner',
      '--no-same-permissions',
    ]);
    const tar = spawn(file, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    tar.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    tar.on('error', reject);
    tar.on('close', (code) => {
      if (code === 0) resolve();
      else if (/no space left|quota exceeded/i.test(stderr))
        reject(Object.assign(new Error(stderr.trim()), { code: 'ENOSPC' }));
      else reject(new RunnerError('internal_error', `Unpacking packages failed: ${stderr.trim()}`));
    });
    tar.stdin.end(bundle);
  });
}
