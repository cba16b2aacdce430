import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import type { RunResult } from '@sandbox/contract/run';
import { cappedFilesWritten, TIMEOUT_EXIT_CODE } from '@sandbox/contract/run';
import { sourceStack } from './cell-lines';
import type { CellAnswer } from './context-host';
import { errorOf, type CellError, type CellOutcome } from './cell-result';
import { mayBeTypeScript } from './cell-source';
import { CodeContext, type ContextProcess, type StartContextProcess } from './code-context';
import { changeClock, type RunHandle } from './exec';
import { changedSince } from './file-snapshot';
import { RunnerError, type ContextInfo } from './protocol';
import { RunOutput, type RunSink } from './run-output';
import { SHELL_DIALECT } from './shell-context';
import { SpareContext } from './spare-context';
import type { SpawnedRun } from './spawner';
import { transpileCell } from './transpile';
import { cpuTimeMs, needsOwnStart, reapedChildrenCpuMs } from './zygotes';

/** Contexts a session may hold at once. */
export const MAX_CONTEXTS = 8;

export type ContextLanguage = ContextInfo['language'];

export interface ContextSpec {
  language: ContextLanguage;
  cwd: string;
  env: Record<string, string>;
  /** The id of a context this runner lost (a deep sleep, a restart), made again. */
  contextId?: string;
}

const CONTEXT_ID = /^ctx_[0-9a-f]{24}$/;

/** A cell: `code` for a code context, `command` for a shell context (ADR 59). */
export interface CellSpec {
  contextId: string;
  code?: string | undefined;
  command?: string | undefined;
  env: Record<string, string>;
  timeoutMs: number;
}

/** A cell's result: a run's, plus its values and error. */
export type CellResultOf = RunResult & { cell: CellOutcome };

/** A shell's CPU time, ms: its own, and its commands' programs it has waited for. */
const shellCpuMs = (pid: number): number => cpuTimeMs(pid) + reapedChildrenCpuMs(pid);

/** The resident set of a process now, bytes (0 when it is gone). */
function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)/m.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

/** How the runner makes a context's process. */
export interface ContextLauncher {
  /** The real working directory of `cwd`, made if missing (exec.ts). */
  workingDirectory(cwd: string): Promise<string>;
  /** A context's process, as the sandbox user, in `dir` with the runner's env and `env`. */
  spawn(dir: string, env: Record<string, string>): Promise<SpawnedRun>;
  /** A shell context's bash (shell-context.ts), the same way. */
  spawnShell(dir: string, env: Record<string, string>): Promise<SpawnedRun>;
}

/** Where a spare process waits: its greeting moves it to its context's directory. */
const SPARE_CWD = '/workspace';

/** The session's code contexts, by id (ADR 42), and a spare process for the next one. */
export class CodeContexts {
  private readonly contexts = new Map<string, CodeContext>();
  private readonly spare: SpareContext;

  constructor(
    private readonly launcher: ContextLauncher,
    spareDelayMs?: number,
  ) {
    this.spare = new SpareContext(
      async () => launcher.spawn(await launcher.workingDirectory(SPARE_CWD), {}),
      spareDelayMs,
    );
  }

  /**
   * A context's process: the spare where there is one (unless `fresh`, or the context's env
   * sets what Node reads only as it starts), else one started now. A spare is armed after.
   */
  private readonly startProcess = async (
    cwd: string,
    env: Record<string, string>,
    fresh: boolean,
  ): Promise<ContextProcess> => {
    const dir = await this.launcher.workingDirectory(cwd);
    const spare = fresh || needsOwnStart(env) ? undefined : this.spare.take();
    this.spare.armSoon();
    const run = await spare?.catch(() => undefined);
    if (run !== undefined) return { run, dir, spare: true };
    return { run: await this.launcher.spawn(dir, env), dir, spare: false };
  };

  /** A shell context's bash: started for it (a bash starts in a few milliseconds, no spare). */
  private readonly startShell: StartContextProcess = async (cwd, env) => {
    const dir = await this.launcher.workingDirectory(cwd);
    return { run: await this.launcher.spawnShell(dir, env), dir, spare: false };
  };

  async create(spec: ContextSpec): Promise<ContextInfo> {
    if (this.contexts.size >= MAX_CONTEXTS) {
      throw new RunnerError(
        'context_limit_exceeded',
        `A session holds ${MAX_CONTEXTS} contexts at the most: delete one first`,
        { max: MAX_CONTEXTS },
      );
    }
    if (spec.contextId !== undefined && !CONTEXT_ID.test(spec.contextId)) {
      throw new RunnerError('invalid_request', 'Not a context id', { contextId: spec.contextId });
    }
    if (spec.contextId !== undefined && this.contexts.has(spec.contextId)) {
      throw new RunnerError('conflict', 'The context exists', { contextId: spec.contextId });
    }
    const info: ContextInfo = {
      contextId: spec.contextId ?? `ctx_${randomBytes(12).toString('hex')}`,
      language: spec.language,
      cwd: spec.cwd,
      createdAt: new Date().toISOString(),
    };
    const context =
      spec.language === 'bash'
        ? new CodeContext(info, spec.env, this.startShell, SHELL_DIALECT)
        : new CodeContext(info, spec.env, this.startProcess);
    this.contexts.set(info.contextId, context);
    try {
      await context.start();
    } catch (err) {
      this.contexts.delete(info.contextId);
      void context.stop();
      throw err;
    }
    return info;
  }

  list(): ContextInfo[] {
    return [...this.contexts.values()].map((context) => context.info);
  }

  delete(contextId: string): void {
    void this.get(contextId).stop();
    this.contexts.delete(contextId);
  }

  async restart(contextId: string): Promise<ContextInfo> {
    const context = this.get(contextId);
    await context.start();
    return context.info;
  }

  close(): void {
    this.spare.close();
    for (const context of this.contexts.values()) void context.stop();
    this.contexts.clear();
  }

  private get(contextId: string): CodeContext {
    const context = this.contexts.get(contextId);
    if (context === undefined) {
      throw new RunnerError('context_not_found', 'No such context in this session', {
        contextId,
      });
    }
    return context;
  }

  /** Runs a cell in its context: a run handle as exec's, whose result carries the cell's. */
  async run(spec: CellSpec, sink: RunSink): Promise<RunHandle> {
    const context = this.get(spec.contextId);
    const code = programOf(context.info, spec);
    if (context.info.language !== 'bash') this.spare.putOff();
    return this.runCell(context, code, spec, sink);
  }

  private async runCell(
    context: CodeContext,
    source: string,
    spec: CellSpec,
    sink: RunSink,
  ): Promise<RunHandle> {
    const started = performance.now();
    let code = source;
    let mappings: string | undefined;
    if (context.info.language === 'typescript' && mayBeTypeScript(source)) {
      try {
        ({ code, mappings } = await transpileCell(source, 'cell.ts'));
      } catch (err) {
        return failedCell(context.pid, syntaxError(err), started);
      }
    }
    const pid = context.pid;
    const cpuOf = context.info.language === 'bash' ? shellCpuMs : cpuTimeMs;
    const cpuBefore = cpuOf(pid);
    const since = await changeClock.read();
    const cell = await context.run({ code, timeoutMs: spec.timeoutMs, env: spec.env });
    const output = new RunOutput([cell.stdout, cell.stderr], sink, 'forward');
    const done = cell.answer.then(async (answer): Promise<CellResultOf> => {
      await output.ended;
      const filesWritten = await changedSince(context.info.cwd, since).catch(() => []);
      return {
        exitCode: exitCodeOf(answer),
        executionTimeMs: Math.round(performance.now() - started),
        memoryUsedBytes: rssBytes(pid),
        cpuTimeMs: Math.max(0, Math.round(cpuOf(pid) - cpuBefore)),
        timedOut: answer.timedOut,
        filesWritten: cappedFilesWritten(filesWritten),
        cell: {
          results: answer.results,
          ...(answer.error === undefined ? {} : { error: sourceError(answer.error, mappings) }),
        },
      };
    });
    return {
      pid,
      pauseOutput: () => output.pause(),
      resumeOutput: () => output.resume(),
      // A cell is not hung up when its client goes: it runs to its end or its timeout.
      cancel: () => undefined,
      done,
      closed: output.ended,
    };
  }
}

/** A cell's exit code: a shell's command's own status, else 0 or 1 by its error. */
function exitCodeOf(answer: CellAnswer): number {
  if (answer.timedOut) return TIMEOUT_EXIT_CODE;
  return answer.exitCode ?? (answer.error === undefined ? 0 : 1);
}

/**
 * What a cell runs, checked against its context: `code` in a code context, `command` in a
 * shell context, whose variables are set in the shell itself rather than per command.
 */
function programOf(info: ContextInfo, spec: CellSpec): string {
  const { contextId, language } = info;
  if (language === 'bash') {
    if (spec.command === undefined) {
      throw new RunnerError(
        'invalid_request',
        'A shell context runs commands: send `command`, not `code`',
        { field: 'command', contextId },
      );
    }
    if (Object.keys(spec.env).length > 0) {
      throw new RunnerError(
        'invalid_request',
        'A shell context keeps its own variables: set them in it (export NAME=value), or give them to the context when it is created',
        { field: 'env', contextId },
      );
    }
    return spec.command;
  }
  if (spec.code === undefined) {
    throw new RunnerError(
      'invalid_request',
      `A ${language} context runs code: send \`code\`, not \`command\``,
      { field: 'code', contextId },
    );
  }
  return spec.code;
}

/** A cell's error, its stack pointing at the cell's TypeScript where there is a map. */
function sourceError(error: CellError, mappings: string | undefined): CellError {
  return mappings === undefined ? error : { ...error, stack: sourceStack(error.stack, mappings) };
}

/** esbuild's refusal of a cell, as the cell's error. */
function syntaxError(err: unknown): CellOutcome['error'] {
  const text = err instanceof Error ? err.message : String(err);
  const message = text.replace(/^Transform failed with \d+ errors?:\n/, '').trim();
  return { ...errorOf(new SyntaxError(message)), stack: `SyntaxError: ${message}` };
}

/** A cell that never ran (its source does not compile). */
function failedCell(pid: number, error: CellOutcome['error'], started: number): RunHandle {
  const result: CellResultOf = {
    exitCode: 1,
    executionTimeMs: Math.round(performance.now() - started),
    memoryUsedBytes: 0,
    cpuTimeMs: 0,
    timedOut: false,
    filesWritten: [],
    cell: { results: [], ...(error === undefined ? {} : { error }) },
  };
  return {
    pid,
    pauseOutput: () => undefined,
    resumeOutput: () => undefined,
    cancel: () => undefined,
    done: Promise.resolve(result),
    closed: Promise.resolve(),
  };
}
