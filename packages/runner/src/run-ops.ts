import type { RunHandle } from './exec';
import type { OpHandler, RunnerContext } from './op-handlers';

/**
 * Starts a code run (a command run is the front's, and refused here) or a context's cell:
 * `started` (with its pid) once its process runs, its output, `result` once its
 * process exited, then whatever processes it left holding its pipes write, and `exec` once
 * they let go of them. Its stdin (`stdin` runs) takes input until its process exits.
 */
export const execOp: OpHandler<'exec'> = async (context, request) => {
  const { id } = request;
  const { channel, runs, flows, starting, inputs } = context;
  const sink = {
    stdout: (chunk: Buffer) => channel.emit({ id, ev: 'stdout', data: chunk.toString('base64') }),
    stderr: (chunk: Buffer) => channel.emit({ id, ev: 'stderr', data: chunk.toString('base64') }),
    onDrain: (resume: () => void) => channel.onDrain(resume),
  };
  const { contextId } = request;
  const run = await startTrackingCancel(context, id, () =>
    contextId === undefined
      ? context.startRun(request, sink)
      : context.contexts.run({ ...request, contextId }, sink),
  );
  // A cancel that came while the run was being prepared applies now.
  const cancelledEarly = starting.get(id) === true;
  starting.delete(id);
  runs.set(id, run);
  flows.set(id, {
    pause: () => run.pauseOutput(),
    resume: () => run.resumeOutput(),
    cancel: () => run.cancel(),
  });
  if (run.input !== undefined) inputs.set(id, run.input);
  if (cancelledEarly) run.cancel();
  channel.emit({ id, ev: 'started', pid: run.pid });
  try {
    const result = await run.done.finally(() => {
      runs.delete(id);
      inputs.delete(id);
    });
    channel.emit({ id, ev: 'result', ...result });
    await run.closed;
    channel.emit({ id, ev: 'exec' });
  } finally {
    flows.delete(id);
  }
};

/** Marks run `id` as starting while `start` prepares it, so that a cancel meanwhile is kept. */
async function startTrackingCancel(
  { starting }: RunnerContext,
  id: number,
  start: () => Promise<RunHandle>,
): Promise<RunHandle> {
  starting.set(id, false);
  try {
    return await start();
  } catch (err) {
    starting.delete(id);
    throw err;
  }
}

/** Stops a run or a file read; a run still being prepared is stopped once it starts. */
export const cancelOp: OpHandler<'cancel'> = ({ channel, flows, starting }, request) => {
  if (starting.has(request.target)) starting.set(request.target, true);
  flows.get(request.target)?.cancel();
  channel.emit({ id: request.id, ev: 'killed', pids: [] });
  return Promise.resolve();
};

/** Holds a run's or a file read's output until `resume`. */
export const pauseOp: OpHandler<'pause'> = ({ channel, flows }, request) => {
  flows.get(request.target)?.pause();
  channel.emit({ id: request.id, ev: 'flow' });
  return Promise.resolve();
};

/** Lets a held run's or file read's output flow again. */
export const resumeOp: OpHandler<'resume'> = ({ channel, flows }, request) => {
  flows.get(request.target)?.resume();
  channel.emit({ id: request.id, ev: 'flow' });
  return Promise.resolve();
};
