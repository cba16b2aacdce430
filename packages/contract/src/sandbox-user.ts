import { SANDBOX_GID, SANDBOX_UID } from './run';

// SANDBOX_UID and SANDBOX_GID are in run.ts, which the runner imports alone.
/** Docker's `User` form. */
export const SANDBOX_USER = `${SANDBOX_UID}:${SANDBOX_GID}`;
/**
 * Who a sandbox's runner and its keep-alive start as: root, in the sandbox user's group. The
 * runner keeps root only as its real and saved uid (out of the user's reach) and works with the
 * user's as its effective one (packages/runner/src/identity.ts).
 */
export const RUNNER_USER = `0:${SANDBOX_GID}`;
export const SANDBOX_HOME = '/home/sandbox';
/** The session's files, inside the sandbox. */
export const WORKSPACE = '/workspace';
