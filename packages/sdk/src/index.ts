export { Sandbox } from './sandbox.js';
export type { ForkOptions } from './fork-options.js';
export type { SnapshotOptions } from './snapshots.js';
export type { Forks, KillOptions } from './sandbox.js';
export type { ConnectOptions, CreateOptions, ListOptions } from './sandbox-options.js';
export { Terminals } from './terminals.js';
export type { Terminal, TerminalOpenOptions } from './terminals.js';
export { TerminalHandle } from './terminal-handle.js';
export type { TerminalExit, WebSocketConstructor, WebSocketLike } from './terminal-handle.js';
export type {
  BackgroundRunOptions,
  ForegroundRunOptions,
  RunCallbacks,
  RunFileInput,
  RunInput,
  RunOptions,
} from './run-options.js';
export { ProcessHandle } from './process-handle.js';
export { SessionList } from './session-list.js';
export type { SessionSummary } from './session-list.js';
export { Files } from './files.js';
export { FileWatch } from './file-watch.js';
export type {
  FileChangeEvent,
  FileWatchEnd,
  FileWatchEvent,
  FileWatchOverflow,
  WatchOptions,
} from './file-watch.js';
export { Processes } from './processes.js';
export { Contexts } from './contexts.js';
export { Snapshots } from './snapshots.js';
export type { ContextCallOptions } from './contexts.js';
export type { OutputOptions, ProcessCallOptions, ProcessRef } from './processes.js';
export type {
  FileCallOptions,
  FileContent,
  RemoveOptions,
  RenameOptions,
  WriteOptions,
} from './files.js';
export { DEFAULT_API_URL } from './http.js';
export type { ClientOptions } from './http.js';
export * from './errors.js';
export type * from './types.js';
