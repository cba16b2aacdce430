export { runCli } from './run-cli';
export type { CliDeps } from './run-cli';
export type { Api, CliIo } from './context';
export { OUTCOMES, exitCodeOf } from './exit-codes';
export { shellQuote } from './shell-quote';
