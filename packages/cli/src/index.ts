export { runCli, USAGE } from './cli';
export type { CliIo } from './cli';
