// pnpm bench's code context rows (ADR 42), beside the code runs' rows.
import { measure } from './timing.mjs';

/** Code contexts (ADR 42): a context's create, and a small cell through the whole stack. */
export async function contextRows(stack, sessionId, { rounds, createRounds }) {
  const contexts = `/sessions/${sessionId}/contexts`;
  const remove = (id) =>
    fetch(`${stack.url}/v1${contexts}/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${stack.key}` },
    });
  let contextId;
  const create = async () => {
    contextId = JSON.parse(await stack.api(contexts, {})).contextId;
  };
  // Each create after the last one's delete (not timed): a session holds 8 at the most.
  const dropLast = async () => {
    if (contextId !== undefined) await remove(contextId);
    contextId = undefined;
  };
  const created = await measure('context create', createRounds, create, { before: dropLast });
  if (contextId === undefined) await create();
  const cell = (code) => async () => {
    const result = JSON.parse(await stack.api('/execute', { sessionId, contextId, code }));
    if (result.exitCode !== 0) throw new Error(`cell failed: ${JSON.stringify(result.error)}`);
  };
  await cell('var x = 1;')();
  const cells = await measure('context cell x + 1, back to back', rounds, cell('x + 1'));
  await remove(contextId);
  return [created, cells];
}
