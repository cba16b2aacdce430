export * from './protocol';
export { CODE_PRELUDE } from './code-file';
export { importedPackages } from './imports';
