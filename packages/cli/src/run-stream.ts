import type { ExecutionResult, RunInput, RunOptions, Sandbox } from '@sandbox/sdk';
import type { CliIo } from './context';
import { OUTCOMES } from './exit-codes';
import { writeTo, type Output } from './output';

/** A signal aborted at Ctrl-C, for as long as a command listens (`dispose` stops it). */
export function interruptSignal(io: CliIo): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const dispose = io.onInterrupt(() => {
    io.stderr.write('\nsandbox: interrupted\n');
    controller.abort(new Error('Interrupted (Ctrl-C)'));
  });
  return { signal: controller.signal, dispose };
}

export type StreamOptions = Pick<RunOptions, 'timeout' | 'env' | 'workingDir'>;

/**
 * Runs `input` in `sandbox`: its output streams to ours as it comes (with --json its whole
 * result is printed at the end instead). At `interrupt` the run is killed by its pid (the
 * stream's `started` event gives it) and the stream left. The exit code: the run's own, 124
 * when it timed out, 130 when interrupted.
 */
export async function streamRun(
  sandbox: Sandbox,
  input: RunInput,
  options: StreamOptions,
  io: Pick<CliIo, 'stdout' | 'stderr'>,
  out: Output,
  interrupt: AbortSignal,
): Promise<number> {
  if (interrupt.aborted) return OUTCOMES.interrupted.code;
  const stream = new AbortController();
  let pid: number | undefined;
  const stop = (): void => {
    // Killed first, so that the run ends even if leaving the stream could not say so; a run
    // not started yet (no pid) is killed by the SDK once it starts.
    const killed = pid === undefined ? Promise.resolve() : sandbox.processes.kill(pid);
    void killed.catch(() => undefined).then(() => stream.abort(interrupt.reason));
  };
  interrupt.addEventListener('abort', stop, { once: true });
  let result: ExecutionResult | undefined;
  try {
    for await (const event of sandbox.stream(input, { ...options, signal: stream.signal })) {
      if (event.type === 'started') pid = event.pid;
      else if (event.type === 'result') result = event.result;
      else if (out.json) continue;
      else if (event.type === 'stdout') await writeTo(io.stdout, event.data);
      else if (event.type === 'stderr') await writeTo(io.stderr, event.data);
    }
  } catch (err) {
    if (!interrupt.aborted) throw err;
  } finally {
    interrupt.removeEventListener('abort', stop);
  }
  if (interrupt.aborted) return OUTCOMES.interrupted.code;
  if (result === undefined) throw new Error('The run ended without a result');
  out.print(result, () => []); // for people, the output streamed above was the answer
  if (!result.timedOut) return result.exitCode;
  if (!out.json) out.note('sandbox: the run timed out and was killed');
  return OUTCOMES.timedOut.code;
}
