/** The unprivileged user every sandbox process runs as (built into the sandbox image). */
export const SANDBOX_UID = 1000;
export const SANDBOX_GID = 1000;
/** Docker's `User` form. */
export const SANDBOX_USER = `${SANDBOX_UID}:${SANDBOX_GID}`;
export const SANDBOX_HOME = '/home/sandbox';
/** The session's files, inside the sandbox. */
export const WORKSPACE = '/workspace';
