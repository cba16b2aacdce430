export { Sandbox } from './sandbox.js';
export type {
  ConnectOptions,
  CreateOptions,
  KillOptions,
  RunInput,
  RunOptions,
  Terminal,
} from './sandbox.js';
export { Files } from './files.js';
export { Processes } from './processes.js';
export type { ProcessCallOptions, ProcessRef } from './processes.js';
export type { FileCallOptions, FileContent, WriteOptions } from './files.js';
export { DEFAULT_API_URL } from './http.js';
export type { ClientOptions } from './http.js';
export * from './errors.js';
export type * from './types.js';
