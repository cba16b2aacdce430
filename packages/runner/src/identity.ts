import { SANDBOX_GID, SANDBOX_UID } from '@sandbox/contract/run';

/*
 * Who the runner is, and who its runs are. In a sandbox the agent starts the runner as root in
 * the sandbox user's group (RUNNER_USER): it keeps root as its real and saved uid, so that no
 * process of the user's can signal it, trace it or read its /proc entries, and works with the
 * user's uid as its effective one, so that the files it writes are the user's and the runs it
 * signals are within its reach. Its container gives root only CAP_SETUID, CAP_SETGID and
 * CAP_SETPCAP, and the runs never keep any (native/spawner.c, "Identities").
 */

/** Process credentials: the runner runs on Linux only, where Node always has them. */
type Credentials = Required<
  Pick<NodeJS.Process, 'getuid' | 'getgid' | 'geteuid' | 'seteuid' | 'setuid' | 'setgroups'>
>;
const credentials = process as NodeJS.Process & Credentials;

/** Whether this process was started as the sandbox's root runner (not as a test's process). */
function startedAsRunner(): boolean {
  return credentials.getuid() === 0 && credentials.getgid() === SANDBOX_GID;
}

/** The uid runs take, as the spawner's argument: the sandbox user's under a root runner. */
export function runUidArgument(): string {
  return credentials.getuid() === 0 && credentials.geteuid() === SANDBOX_UID
    ? String(SANDBOX_UID)
    : '';
}

/** Takes the runner's identity: root underneath, the sandbox user's effective uid on top. */
export function becomeRunner(): void {
  if (!startedAsRunner()) return;
  credentials.setgroups([SANDBOX_GID]);
  credentials.seteuid(SANDBOX_UID);
}

/**
 * A zygote handed its run becomes the sandbox user in full: root for a moment (its real uid
 * allows it; the CAP_SETUID its spawner left it becomes effective; gVisor's exec made it root
 * already), then the user's real, effective and saved uid, which clears every capability it
 * had. Nothing to do where the zygote was not started by a root runner (in the sandbox user's
 * group).
 */
export function becomeUser(): void {
  if (credentials.getuid() !== 0 || credentials.getgid() !== SANDBOX_GID) return;
  if (credentials.geteuid() !== 0) credentials.seteuid(0);
  credentials.setuid(SANDBOX_UID);
  if (credentials.getuid() !== SANDBOX_UID || credentials.geteuid() !== SANDBOX_UID) {
    throw new Error('could not become the sandbox user');
  }
}
