export { AdminClient } from './admin-client';
export { runCli, USAGE } from './cli';
export type { CliDefaults, CliIo } from './cli';
