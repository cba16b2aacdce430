import { CPU_SPLIT, OUTPUT_GRACE_MS, spawner, stringEnv, workingDirectory } from './exec';
import type { OpHandler } from './op-handlers';
import { RunnerError } from './protocol';
import { RunOutput } from './run-output';
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
    cancel: () => hangUp(run.pid, false),
  });
  if (run.input !== undefined) inputs.set(id, run.input);
  channel.emit({ id, ev: 'started', pid: run.pid });
  try {
    const exit = await run.exited;
    // Background jobs may keep the terminal open: their output after the shell's is dropped.
    await Promise.race([output.ended, new Promise((ok) => setTimeout(ok, OUTPUT_GRACE_MS))]);
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
    throw new RunnerError('process_not_found', 'No terminal or run takes input under that id');
  }
  return input;
}

/** Writes to a terminal (or ends a run's stdin); answers once the bytes were taken. */
export const inputOp: OpHandler<'input'> = async (context, request) => {
  const input = inputOf(context, request.target);
  if (request.end === true) await input.end();
  else await input.write(Buffer.from(request.data, 'base64'));
  context.channel.emit({ id: request.id, ev: 'flow' });
};

/** A terminal's new size. */
export const resizeOp: OpHandler<'resize'> = (context, request) => {
  inputOf(context, request.target).resize({ cols: request.cols, rows: request.rows });
  context.channel.emit({ id: request.id, ev: 'flow' });
  return Promise.resolve();
};
