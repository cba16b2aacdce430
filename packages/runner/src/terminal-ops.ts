import { CPU_SPLIT, OUTPUT_GRACE_MS, spawner, stringEnv, workingDirectory } from './exec';
import type { OpHandler } from './op-handlers';
import { RunnerError } from './protocol';
import { RunOutput, settledWithin } from './run-output';
import { hangUp } from './run-stop';
import { constants } from 'node:os';

/**
 * Starts a program on a pseudo-terminal of its own (a shell, for an interactive terminal):
 * `started` with its pid, its screen's bytes as `stdout`, then `exited`. Its input and size
 * come through `input` and `resize`; a cancel (the terminal's client went away) hangs it up,
 * as closing a terminal window does.
 */
export const terminalOp: OpHandler<'terminal'> = async (context, request) => {
  const { id } = request;
  const { channel, flows, inputs } = context;
  if (!spawner.available) {
    throw new RunnerError('service_unavailable', 'Terminals need the run spawner of the image');
  }
  const cwd = await workingDirectory(request.cwd);
  const run = await spawner.spawn(request.argv, {
    cwd,
    env: { ...stringEnv(process.env), ...request.env },
    enterCpuGroup: CPU_SPLIT,
    terminal: { cols: request.cols, rows: request.rows },
  });
  const output = new RunOutput([run.stdout, run.stderr], {
    stdout: (chunk) => channel.emit({ id, ev: 'stdout', data: chunk.toString('base64') }),
    stderr: (chunk) => channel.emit({ id, ev: 'stdout', data: chunk.toString('base64') }),
    onDrain: (resume) => channel.onDrain(resume),
  });
  flows.set(id, {
    pause: () => output.pause(),
    resume: () => output.resume(),
    cancel: () => hangUp(run.pid),
  });
  if (run.input !== undefined) inputs.set(id, run.input);
  channel.emit({ id, ev: 'started', pid: run.pid });
  try {
    const exit = await run.exited;
    // Background jobs may keep the terminal open: their output after the shell's is dropped.
    await settledWithin(output.ended, OUTPUT_GRACE_MS);
    output.finish();
    const signal = exit.signal === null ? 0 : (constants.signals[exit.signal] ?? 1);
    channel.emit({ id, ev: 'exited', exitCode: exit.code ?? 128 + signal });
  } finally {
    flows.delete(id);
    inputs.delete(id);
  }
};

function inputOf(context: Parameters<OpHandler<'input'>>[0], target: number) {
  const input = context.inputs.get(target);
  if (input === undefined) {
    throw new RunnerError('stdin_closed', 'The process takes no more input', {
      reason: 'closed',
    });
  }
  return input;
}

/**
 * Writes to a terminal or a run's stdin, then (`end`) closes a run's stdin; answers `taken`
 * once the process took the bytes. A cancel (the caller gave up) answers at once with what was
 * taken so far and closes nothing; the step being written then (INPUT_STEP bytes at most)
 * may still reach the process, in order.
 */
export const inputOp: OpHandler<'input'> = async (context, request) => {
  const input = inputOf(context, request.target);
  let stop: () => void = () => undefined;
  const cancelled = new Promise<false>((resolve) => (stop = () => resolve(false)));
  context.flows.set(request.id, {
    pause: () => undefined,
    resume: () => undefined,
    cancel: () => stop(),
  });
  let taken = 0;
  let complete = true;
  try {
    const data = Buffer.from(request.data, 'base64');
    for (let at = 0; at < data.length; at += INPUT_STEP) {
      const step = data.subarray(at, at + INPUT_STEP);
      complete = await Promise.race([input.write(step).then(() => true), cancelled]);
      if (!complete) break;
      taken += step.length;
    }
    // Closed once every byte went in; the process sees the end of its input then.
    if (complete && request.end === true) {
      context.inputs.delete(request.target);
      await Promise.race([input.end(), cancelled]);
    }
  } finally {
    context.flows.delete(request.id);
  }
  context.channel.emit({ id: request.id, ev: 'taken', bytes: taken });
};

/** Input goes to the process in steps of this size, so that a cancel stops it soon. */
const INPUT_STEP = 16 * 1024;
/** A terminal's new size. */
export const resizeOp: OpHandler<'resize'> = (context, request) => {
  inputOf(context, request.target).resize({ cols: request.cols, rows: request.rows });
  context.channel.emit({ id: request.id, ev: 'flow' });
  return Promise.resolve();
};
