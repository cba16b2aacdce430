/*
 * A run's process and output as the gateway and the agent both speak of them (their gRPC
 * messages are mapped to these on either side): declared once.
 */

/** A run as the session's process list knows it. */
export interface ProcessRef {
  id: string;
  pid: number;
}

/** Bytes of each stream before a point of a run's output: where a reader is in it. */
export interface OutputPosition {
  stdout: number;
  stderr: number;
}

/** Where a chunk of output ends in its run's log. */
export interface OutputMark {
  process: ProcessRef;
  at: OutputPosition;
}

/** What a terminal runs, where, and on a screen of what size. */
export interface TerminalSpec {
  argv: string[];
  env: Record<string, string>;
  /** Absolute, under /workspace. */
  workingDir: string;
  cols: number;
  rows: number;
}
