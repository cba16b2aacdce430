import { base64 } from './files.js';
import type { HttpClient } from './http.js';
import { resumingEvents } from './sse.js';
import type { KillResult, OutputEvent, ProcessInfo, ProcessOutput, StdinResult } from './types.js';

export interface ProcessCallOptions {
  signal?: AbortSignal;
}

/** A pid (the newest run with it) or a process id (`proc_…`, never used again). */
export type ProcessRef = number | string;

/** How often a dropped follow is resumed before the failure is thrown. */
const MAX_RESUMES = 5;

/**
 * A session's runs: their list and state, their kept output (after the connection that
 * streamed it dropped, after idle and deep sleep), their stdin, and killing them.
 */
export class Processes {
  constructor(
    private readonly http: HttpClient,
    private readonly sessionId: string,
  ) {}

  private path(ref?: ProcessRef, rest = ''): string {
    const base = `/sessions/${encodeURIComponent(this.sessionId)}/processes`;
    return ref === undefined ? base : `${base}/${encodeURIComponent(String(ref))}${rest}`;
  }

  /** The session's runs, oldest first (does not wake the session). */
  async list(options: ProcessCallOptions = {}): Promise<ProcessInfo[]> {
    const listed = await this.http.json<{ processes: ProcessInfo[] }>({
      method: 'GET',
      path: this.path(),
      signal: options.signal,
      retry: 'safe',
    });
    return listed.processes;
  }

  get(ref: ProcessRef, options: ProcessCallOptions = {}): Promise<ProcessInfo> {
    return this.http.json<ProcessInfo>({
      method: 'GET',
      path: this.path(ref),
      signal: options.signal,
      retry: 'safe',
    });
  }

  /** A run's kept output from the given offsets (default: all that is kept), as text. */
  output(
    ref: ProcessRef,
    options: ProcessCallOptions & { stdoutOffset?: number; stderrOffset?: number } = {},
  ): Promise<ProcessOutput> {
    return this.http.json<ProcessOutput>({
      method: 'GET',
      path: this.path(ref, '/output'),
      query: { stdoutOffset: options.stdoutOffset, stderrOffset: options.stderrOffset },
      signal: options.signal,
      retry: 'safe',
    });
  }

  /**
   * A run's output as it comes, from its start (or the given offsets), until the run and what
   * it left running let go of its pipes (`end`). A dropped connection is resumed where it
   * stopped. Leaving the loop early ends the read (not the run).
   */
  async *follow(
    ref: ProcessRef,
    options: ProcessCallOptions & { stdoutOffset?: number; stderrOffset?: number } = {},
  ): AsyncGenerator<OutputEvent, void, undefined> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const open = async (lastEventId: string | undefined): Promise<Response | undefined> => {
      const response = await this.http.send({
        method: 'GET',
        path: this.path(ref, '/output'),
        query:
          lastEventId === undefined
            ? { stdoutOffset: options.stdoutOffset, stderrOffset: options.stderrOffset }
            : {},
        headers: {
          accept: 'text/event-stream',
          ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
        },
        signal: controller.signal,
        retry: 'safe',
      });
      return response.status === 204 ? undefined : response;
    };
    try {
      for await (const message of resumingEvents(open, {
        maxResumes: MAX_RESUMES,
        aborted: () => controller.signal.aborted,
        exhausted: () => new Error('The output stream kept dropping'),
      })) {
        const data = JSON.parse(message.data) as Record<string, unknown>;
        if (message.event === 'stdout' || message.event === 'stderr') {
          yield { type: message.event, data: data.data as string };
        } else if (message.event === 'gap') {
          yield { type: 'gap', stdout: data.stdout as number, stderr: data.stderr as number };
        } else if (message.event === 'end') {
          yield { type: 'end', process: data as unknown as ProcessInfo };
          return;
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
  }

  /**
   * Writes to the stdin of a run started with `stdin: true` (and/or closes it): resolves once
   * the process took every byte (it may hold a writer back; after 30 s the call fails with
   * what it took, and the rest is not written).
   */
  writeStdin(
    ref: ProcessRef,
    data: string | Uint8Array,
    options: ProcessCallOptions & { close?: boolean } = {},
  ): Promise<StdinResult> {
    const body =
      typeof data === 'string' ? { data } : { data: base64(data), encoding: 'base64' as const };
    return this.http.json<StdinResult>({
      method: 'POST',
      path: this.path(ref, '/stdin'),
      json: { ...body, ...(options.close === true ? { close: true } : {}) },
      signal: options.signal,
      retry: 'refused',
    });
  }

  /** Closes the stdin of a run: it reads the end of its input. */
  closeStdin(ref: ProcessRef, options: ProcessCallOptions = {}): Promise<StdinResult> {
    return this.http.json<StdinResult>({
      method: 'POST',
      path: this.path(ref, '/stdin'),
      json: { close: true },
      signal: options.signal,
      retry: 'refused',
    });
  }

  /** Kills one process (and its children), or every process of the session. */
  kill(pid?: number, options: ProcessCallOptions = {}): Promise<KillResult> {
    return this.http.json<KillResult>({
      method: 'POST',
      path: '/execution/kill',
      json: pid === undefined ? { sessionId: this.sessionId } : { sessionId: this.sessionId, pid },
      signal: options.signal,
      retry: 'safe',
    });
  }
}
