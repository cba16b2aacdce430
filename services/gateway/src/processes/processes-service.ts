import { AppError } from '@sandbox/errors';
import type { OutputPosition, ProcessRecord } from '../agents/agent-messages';
import type { Principal } from '../auth/principal';
import type { SessionAccess } from '../sessions/session-access';
import type { ReplayTarget } from './output-replay';
import { OutputText } from '../execute/output-text';

/** Spec 2.10 */
export interface KillResult {
  killed: number;
  pids: number[];
}

/** A run of a session, as GET /v1/sessions/{id}/processes shows it. */
export interface ProcessView {
  id: string;
  pid: number;
  kind: 'command' | 'code';
  /** The command, or the code's first line (200 characters at the most). */
  command: string;
  state: 'running' | 'exited' | 'lost';
  startedAt: string;
  exitedAt: string | null;
  exitCode: number | null;
  timedOut: boolean;
  /** A lost run: the error it ended with. */
  error?: { code: string; message: string };
  stdin: boolean;
  stdinBytes: number;
  /** Output may still come (the run, or what it left running, holds its pipes). */
  outputOpen: boolean;
  stdoutBytes: number;
  stderrBytes: number;
  /** Where the kept output begins: what came before went at the cap. */
  keptFrom: OutputPosition;
  maxOutputBytes: number;
}

export function toProcessView(record: ProcessRecord): ProcessView {
  return {
    id: record.id,
    pid: record.pid,
    kind: record.kind,
    command: record.label,
    state: record.state,
    startedAt: record.startedAt,
    exitedAt: record.exitedAt ?? null,
    exitCode: record.result?.exitCode ?? null,
    timedOut: record.result?.timedOut ?? false,
    ...(record.failure === undefined ? {} : { error: record.failure }),
    stdin: record.stdin,
    stdinBytes: record.stdinBytes,
    outputOpen: !record.outputClosed,
    stdoutBytes: record.written.stdout,
    stderrBytes: record.written.stderr,
    keptFrom: record.keptFrom,
    maxOutputBytes: record.logBytes,
  };
}

/** GET …/processes/{pid}/output as JSON: the kept output from a position, as text. */
export interface OutputView {
  process: ProcessView;
  stdout: string;
  stderr: string;
  /** Where this text ends: the offsets to ask for next. */
  next: OutputPosition;
  /** Output between the asked offsets and `keptFrom` was dropped at the cap. */
  gap: boolean;
}

/**
 * A session's processes: killing them (spec 4.5, counts as activity), their list and kept
 * output (read without waking the session), their stdin (wakes it).
 */
export class ProcessesService {
  constructor(
    private readonly access: SessionAccess,
    /** How long a stdin write waits for its process to take it (PROCESS_STDIN_WAIT_MS). */
    private readonly stdinWaitMs = 30_000,
  ) {}

  async kill(
    principal: Principal,
    sessionId: string,
    pid: number | undefined,
  ): Promise<KillResult> {
    const { session, agent } = await this.access.open(principal, sessionId);
    const pids = await agent.killProcesses(session.id, pid);
    return { killed: pids.length, pids };
  }

  async list(principal: Principal, sessionId: string): Promise<ProcessView[]> {
    const { session, agent } = await this.access.locate(principal, sessionId);
    return (await agent.listProcesses(session.id)).map(toProcessView);
  }

  async get(principal: Principal, sessionId: string, ref: string): Promise<ProcessView> {
    const { session, agent } = await this.access.locate(principal, sessionId);
    const found = findProcess(await agent.listProcesses(session.id), ref);
    return toProcessView(found);
  }

  /** The caller's session's process `ref` (an id or a pid), to read its output. */
  async locate(principal: Principal, sessionId: string, ref: string): Promise<ReplayTarget> {
    const { session, agent } = await this.access.locate(principal, sessionId);
    const found = findProcess(await agent.listProcesses(session.id), ref);
    return { agent, sessionId: session.id, process: found.id };
  }

  /** The kept output from `from` to its current end, as text cut at whole characters. */
  async output(
    principal: Principal,
    sessionId: string,
    ref: string,
    from: OutputPosition,
  ): Promise<OutputView> {
    const target = await this.locate(principal, sessionId, ref);
    const text = new OutputText(from);
    const parts = { stdout: [] as string[], stderr: [] as string[] };
    let record: ProcessRecord | undefined;
    let gap = false;
    await target.agent.readOutput(
      {
        sessionId: target.sessionId,
        process: target.process,
        from,
        follow: false,
        untilExit: false,
      },
      (event) => {
        if (event.kind === 'end' || event.kind === 'process') record = event.process;
        else if (event.kind === 'gap') {
          gap = true;
          text.jump(event.at);
        } else parts[event.kind].push(text.push(event.kind, event.data));
      },
      new AbortController().signal,
    );
    if (record === undefined) throw new AppError('internal_error', 'The node sent no process');
    if (record.outputClosed) {
      // Nothing will complete a cut character any more.
      parts.stdout.push(text.flush('stdout'));
      parts.stderr.push(text.flush('stderr'));
    }
    return {
      process: toProcessView(record),
      stdout: parts.stdout.join(''),
      stderr: parts.stderr.join(''),
      next: text.at,
      gap,
    };
  }

  /**
   * Writes to a run's stdin (and/or closes it): answered once the process took every byte;
   * after `stdinWaitMs`, 408 request_timeout with what it took (the rest is not written).
   */
  async writeStdin(
    principal: Principal,
    sessionId: string,
    ref: string,
    input: { data: Buffer; close: boolean },
  ): Promise<{ written: number; closed: boolean }> {
    const { session, agent } = await this.access.open(principal, sessionId);
    const written = await agent.writeStdin({
      sessionId: session.id,
      process: ref,
      data: input.data,
      close: input.close,
      waitMs: this.stdinWaitMs,
    });
    if (!written.complete) {
      throw new AppError(
        'request_timeout',
        `The process took ${written.written} of ${input.data.length} bytes in ${this.stdinWaitMs} ms; the rest was not written`,
        { details: { written: written.written, bytes: input.data.length } },
      );
    }
    return { written: written.written, closed: input.close };
  }
}

/** A process of the list by id, or by pid (the newest with it); 404 process_not_found. */
function findProcess(records: ProcessRecord[], ref: string): ProcessRecord {
  const found = /^\d+$/.test(ref)
    ? records.filter((record) => record.pid === Number(ref)).at(-1)
    : records.find((record) => record.id === ref);
  if (found === undefined) {
    throw new AppError('process_not_found', `No process ${ref} in this session`, {
      details: { pid: ref },
    });
  }
  return found;
}
