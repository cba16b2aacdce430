import type { Writable } from 'node:stream';
import { startRun, type RunHandle } from './exec';
import {
  installBundleOp,
  listFilesOp,
  makeDirectoryOp,
  missingPackagesOp,
  readFileOp,
  removeFileOp,
  renameFileOp,
  statFileOp,
  writeFilesOp,
} from './file-ops';
import type { OpHandlers, RunnerContext } from './op-handlers';
import { OutputChannel, type Flow } from './output-channel';
import { contextOp, sessionContexts } from './context-ops';
import type { CodeContexts } from './contexts';
import { killOp, pingOp, statsOp, watchOp } from './process-ops';
import { RunnerError, type RunnerRequest } from './protocol';
import { cancelOp, execOp, pauseOp, resumeOp } from './run-ops';
import type { RunStdin } from './spawner';
import { inputOp, resizeOp, terminalOp } from './terminal-ops';

/** One handler per op of the protocol: the compiler rejects a missing one. */
export const OP_HANDLERS: OpHandlers = {
  ping: pingOp,
  exec: execOp,
  terminal: terminalOp,
  input: inputOp,
  resize: resizeOp,
  cancel: cancelOp,
  pause: pauseOp,
  resume: resumeOp,
  kill: killOp,
  stats: statsOp,
  writeFiles: writeFilesOp,
  readFile: readFileOp,
  listFiles: listFilesOp,
  statFile: statFileOp,
  removeFile: removeFileOp,
  renameFile: renameFileOp,
  makeDirectory: makeDirectoryOp,
  watch: watchOp,
  missingPackages: missingPackagesOp,
  installBundle: installBundleOp,
  context: contextOp,
};

export interface RunnerServerOptions {
  /** The runner and the container's keep-alive (see infrastructurePids). */
  infrastructure: ReadonlySet<number>;
  /** How runs start; exec.ts's startRun unless a test passes its own. */
  startRun?: RunnerContext['startRun'];
  /** The pid of the runner's front, when the front started this runner (ADR 34). */
  front?: number;
  /** The session's code contexts; their processes started by the spawner unless a test's. */
  contexts?: CodeContexts;
}

/**
 * Answers the agent's requests, concurrently, on one output; holds what is under way (runs,
 * file reads, runs being prepared).
 */
export class RunnerServer implements RunnerContext {
  readonly channel: OutputChannel;
  readonly runs = new Map<number, RunHandle>();
  readonly flows = new Map<number, Flow>();
  readonly inputs = new Map<number, RunStdin>();
  readonly starting = new Map<number, boolean>();
  readonly infrastructure: ReadonlySet<number>;
  readonly startRun: RunnerContext['startRun'];
  readonly front: number | undefined;
  readonly contexts: CodeContexts;

  constructor(output: Writable, options: RunnerServerOptions) {
    this.channel = new OutputChannel(output);
    this.infrastructure = options.infrastructure;
    this.startRun = options.startRun ?? startRun;
    this.front = options.front;
    this.contexts = options.contexts ?? sessionContexts();
  }

  /** Answers one request; whatever fails becomes its error event. */
  handle(request: RunnerRequest): void {
    this.dispatch(request).catch((err: unknown) => this.channel.fail(request.id, err));
  }

  /** The agent went away: foreground runs stop; background processes live on. */
  cancelRuns(): void {
    for (const run of this.runs.values()) run.cancel();
  }

  private async dispatch(request: RunnerRequest): Promise<void> {
    // Own properties only: an op named after an Object method is unknown too.
    if (!Object.hasOwn(OP_HANDLERS, request.op)) {
      throw new RunnerError('invalid_request', 'Unknown operation');
    }
    // The table pairs each op with its request type; the union cannot be narrowed here.
    const handler = OP_HANDLERS[request.op] as (
      context: RunnerContext,
      request: RunnerRequest,
    ) => Promise<void>;
    await handler(this, request);
  }
}
