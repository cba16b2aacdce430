/**
 * Counts files under /workspace and the session's processes, from inside the sandbox. The
 * script's own processes (its session) and the sandbox's init and keep-alive are left out.
 */
export const SANDBOX_STATS_SCRIPT = [
  'echo "files $(find /workspace -xdev -type f 2>/dev/null | wc -l)"',
  'echo "self $(ps -o sid= -p $$)"',
  'ps -e -o pid=,ppid=,sid=,args=',
].join('; ');

export interface SandboxStats {
  filesCount: number;
  activeProcesses: number;
}

export function parseSandboxStats(output: string): SandboxStats {
  const lines = output.split('\n').map((line) => line.trim());
  const filesCount = Number.parseInt(
    lines.find((l) => l.startsWith('files '))?.slice(6) ?? '0',
    10,
  );
  const selfSid = lines
    .find((l) => l.startsWith('self '))
    ?.slice(5)
    .trim();
  let activeProcesses = 0;
  for (const line of lines) {
    const match = /^(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (match === null) continue;
    const [, pid, ppid, sid, args] = match;
    if (pid === '1' || sid === selfSid) continue; // init, or this script
    if (ppid === '1' && args === 'sleep infinity') continue; // the sandbox's keep-alive
    activeProcesses += 1;
  }
  return { filesCount: Number.isNaN(filesCount) ? 0 : filesCount, activeProcesses };
}
