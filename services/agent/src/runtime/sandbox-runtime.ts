/** What the agent's gRPC handlers need from a container runtime. Docker implements it. */

export interface SandboxLimits {
  memoryMb: number;
  cpu: number;
  diskMb: number;
  pids: number;
}

export interface SandboxSpec {
  sessionId: string;
  accountId: string;
  limits: SandboxLimits;
}

export type SandboxStatus = 'running' | 'paused' | 'missing';

export interface SandboxInfo {
  sessionId: string;
  containerId: string;
  status: SandboxStatus;
  filesCount: number;
  activeProcesses: number;
}

export interface ExecSpec {
  sessionId: string;
  command: string;
  env: Record<string, string>;
  workingDir: string;
  timeoutMs: number;
}

export interface ExecOutcome {
  exitCode: number;
  executionTimeMs: number;
  memoryUsedBytes: number;
  cpuTimeMs: number;
  timedOut: boolean;
}

/** Receives output as the process writes it. */
export interface ExecSink {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
}

export interface SandboxRuntime {
  /** Makes sure the image and network exist; throws service_unavailable when they cannot. */
  prepare(): Promise<void>;
  /** Creates and starts the sandbox; returns the existing one for a known session. */
  create(spec: SandboxSpec): Promise<SandboxInfo>;
  inspect(sessionId: string): Promise<SandboxInfo>;
  /** Removes the container and its workspace; false when nothing was there. */
  destroy(sessionId: string): Promise<boolean>;
  exec(spec: ExecSpec, sink: ExecSink, signal: AbortSignal): Promise<ExecOutcome>;
  count(): Promise<number>;
  /** The sandbox's address on the sandbox network, for preview traffic; 404 when absent. */
  previewHost(sessionId: string): Promise<string>;
}
