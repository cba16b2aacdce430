import { posix } from 'node:path';
import { CodeContexts } from './contexts';
import { CPU_SPLIT, spawner, stringEnv, workingDirectory } from './exec';
import type { OpHandler } from './op-handlers';
import { RunnerError } from './protocol';
import { SHELL_HOST } from './shell-context';
import type { SpawnedRun } from './spawner';

/** A context's process (context-host.ts), beside this module. */
const CONTEXT_HOST = posix.join(__dirname, 'context-host.js');

/**
 * Starts a context's process as any run's: by the spawner, as the sandbox user, in the
 * session's CPU group, with the runner's environment and the context's.
 */
async function spawnContext(
  argv: string[],
  dir: string,
  env: Record<string, string>,
): Promise<SpawnedRun> {
  if (!spawner.available) {
    throw new RunnerError('service_unavailable', 'Contexts need the run spawner of the image');
  }
  return spawner.spawn(argv, {
    cwd: dir,
    env: { ...stringEnv(process.env), ...env },
    enterCpuGroup: CPU_SPLIT,
    stdin: true,
  });
}

/**
 * A code context's Node. Node's internals are exposed to it for its own copy of acorn (a
 * cell's imports, cell-source.ts): they give the sandbox user nothing it could not do with a
 * run.
 */
export function spawnContextProcess(dir: string, env: Record<string, string>): Promise<SpawnedRun> {
  const flags = ['--expose-internals', '--disable-warning=ExperimentalWarning'];
  return spawnContext([process.execPath, ...flags, '--enable-source-maps', CONTEXT_HOST], dir, env);
}

/** A shell context's bash (ADR 59), its loop given as its script. */
function spawnShellProcess(dir: string, env: Record<string, string>): Promise<SpawnedRun> {
  return spawnContext(['/bin/bash', '--noprofile', '--norc', '-c', SHELL_HOST, 'bash'], dir, env);
}

/** The session's contexts, their processes started as above. */
export function sessionContexts(): CodeContexts {
  return new CodeContexts({
    workingDirectory,
    spawn: spawnContextProcess,
    spawnShell: spawnShellProcess,
  });
}

/** Creates, lists, deletes or restarts contexts: answers with the one acted on, or all. */
export const contextOp: OpHandler<'context'> = async ({ channel, contexts }, request) => {
  const { id, contextId } = request;
  const needsId = (): string => {
    if (contextId === undefined) throw new RunnerError('invalid_request', 'contextId is missing');
    return contextId;
  };
  switch (request.action) {
    case 'create': {
      const info = await contexts.create({
        language: request.language ?? 'typescript',
        cwd: request.cwd ?? '/workspace',
        env: request.env ?? {},
        ...(contextId === undefined ? {} : { contextId }),
      });
      channel.emit({ id, ev: 'contexts', contexts: [info] });
      return;
    }
    case 'list':
      channel.emit({ id, ev: 'contexts', contexts: contexts.list() });
      return;
    case 'delete':
      contexts.delete(needsId());
      channel.emit({ id, ev: 'contexts', contexts: [] });
      return;
    case 'restart':
      channel.emit({ id, ev: 'contexts', contexts: [await contexts.restart(needsId())] });
      return;
  }
};
