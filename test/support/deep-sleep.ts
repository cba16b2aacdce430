import type { ApiClient } from './api-client';

/** A workspace worth checking: 30 MB of random bytes, a thousand files, symlinks, modes, times. */
export const FILL = [
  'mkdir -p many sub empty',
  'head -c 30000000 /dev/urandom > random.bin',
  'for i in $(seq 1 1000); do echo "file $i" > many/f$i; done',
  'ln -s random.bin link',
  'ln -s ../many/f1 sub/relative',
  'ln -s /nowhere dangling',
  'chmod 600 many/f1',
  'chmod 751 sub',
  'chmod 755 many/f2',
  "touch -h -d '2020-01-02 03:04:05' many/f4 link",
].join(' && ');

/** Type, mode, mtime (seconds), path and symlink target of everything, then a hash of contents. */
export const FINGERPRINT = [
  'find . -printf "%y %m %Ts %p -> %l\\n" | LC_ALL=C sort',
  'find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum',
].join('; ');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function untilDeepSleep(api: ApiClient, sessionId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { body } = await api.session<{ state: string }>(sessionId);
    if (body.state === 'deep-sleep') return;
    await sleep(100);
  }
  throw new Error(`${sessionId} did not go to deep sleep within 30 s`);
}
